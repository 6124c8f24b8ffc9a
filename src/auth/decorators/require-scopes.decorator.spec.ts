import { Reflector } from '@nestjs/core';
import { ApiOperation, DECORATORS } from '@nestjs/swagger';
import { REQUIRED_SCOPES_KEY, RequireScopes, SCOPES_EXTENSION } from './require-scopes.decorator';

class Routes {
  @RequireScopes('plants:write')
  @ApiOperation({ operationId: 'write', summary: 'Write', description: 'Writes a plant.' })
  write(): void {}

  @RequireScopes('plants:read', 'plants:write')
  @ApiOperation({ operationId: 'both', summary: 'Both' })
  both(): void {}
}

@RequireScopes('plants:read')
class ReadRoutes {
  read(): void {}
}

const reflector = new Reflector();
const operationOf = (handler: () => void) => reflector.get<Record<string, string>>(DECORATORS.API_OPERATION, handler);

describe(RequireScopes.name, () => {
  it('sets the scopes the guard checks, on a route or a controller', () => {
    expect(reflector.get(REQUIRED_SCOPES_KEY, Routes.prototype.write)).toEqual(['plants:write']);
    expect(reflector.get(REQUIRED_SCOPES_KEY, Routes.prototype.both)).toEqual(['plants:read', 'plants:write']);
    expect(reflector.get(REQUIRED_SCOPES_KEY, ReadRoutes)).toEqual(['plants:read']);
  });

  it("ends the route's OpenAPI description with the scopes it needs, keeping the rest of the operation", () => {
    expect(operationOf(Routes.prototype.write)).toEqual({
      operationId: 'write',
      summary: 'Write',
      description: 'Writes a plant. Needs the scope plants:write.',
    });
    expect(operationOf(Routes.prototype.both).description).toBe('Needs the scopes plants:read, plants:write.');
  });

  it("lists the route's scopes in the operation's extension, for tools that read the document", () => {
    const extensions = (handler: () => void) =>
      reflector.get<Record<string, unknown>>(DECORATORS.API_EXTENSION, handler);
    expect(extensions(Routes.prototype.write)).toEqual({ [SCOPES_EXTENSION]: ['plants:write'] });
    expect(extensions(Routes.prototype.both)).toEqual({ [SCOPES_EXTENSION]: ['plants:read', 'plants:write'] });
  });

  it('refuses a route whose @ApiOperation it cannot complete', () => {
    const declare = () => {
      class Misplaced {
        @ApiOperation({ operationId: 'late', summary: 'Late' })
        @RequireScopes('plants:read')
        late(): void {}
      }
      return Misplaced;
    };
    expect(declare).toThrow('@RequireScopes on late must sit above its @ApiOperation');
  });
});
