import { Controller, Delete, HttpCode, Post } from '@nestjs/common';
import { HTTP_CODE_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import type { Request } from 'express';
import { Idempotent, isIdempotent } from './idempotent.decorator';

/** An IdempotencyService that runs the work as if the key were new, recording what it was asked. */
function service() {
  const calls: { fingerprint: string; status: number }[] = [];
  return {
    calls,
    begin: jest.fn(async (_ref: unknown, fingerprint: string, route: { successStatus: number }) => {
      calls.push({ fingerprint, status: route.successStatus });
      return { kind: 'proceed' as const, held: {} };
    }),
    succeed: jest.fn((_held: unknown, work: () => Promise<unknown>) => work()),
    failed: jest.fn(),
  };
}

@Controller('things')
class Things {
  prepared: string[] = [];

  @Post()
  @Idempotent<Things['create']>({
    prepare(this: Things, name) {
      this.prepared.push(name);
      return Promise.resolve();
    },
  })
  @HttpCode(200)
  create(name: string): Promise<string> {
    return Promise.resolve(`made ${name}`);
  }

  @Idempotent()
  @Delete(':id')
  @HttpCode(204)
  remove(id: string): Promise<void> {
    return Promise.resolve(void id);
  }
}

const request = (path: string, key?: string) =>
  ({
    method: 'POST',
    path,
    headers: key ? { 'idempotency-key': key } : {},
    user: { subject: 'alice' },
  }) as unknown as Request;

describe(Idempotent.name, () => {
  it("keeps the route's own metadata, applied below it or above it, on the handler Nest calls", () => {
    const handler = Things.prototype.create;
    expect(Reflect.getMetadata(HTTP_CODE_METADATA, handler)).toBe(200);
    expect(Reflect.getMetadata(HTTP_CODE_METADATA, Things.prototype.remove)).toBe(204);
    expect(Reflect.getMetadata(PATH_METADATA, Things.prototype.remove)).toBe(':id');
    expect(handler.name).toBe('create');
  });

  it('marks the handler Nest calls, applied below the route decorator or above it', () => {
    expect(isIdempotent(Things.prototype.create)).toBe(true);
    expect(isIdempotent(Things.prototype.remove)).toBe(true);
    expect(isIdempotent(request)).toBe(false);
  });

  it("asks Nest for the request as a parameter after the handler's own", () => {
    const args = Reflect.getMetadata(ROUTE_ARGS_METADATA, Things, 'create') as Record<string, { index: number }>;
    expect(Object.values(args).map((arg) => arg.index)).toEqual([1]);
  });

  it('runs the handler as it is without the header, prepare first', async () => {
    const things = new Things();
    const idempotency = service();
    setService(things, idempotency);
    await expect(call(things.create).call(things, 'fern', request('/things'))).resolves.toBe('made fern');
    expect(things.prepared).toEqual(['fern']);
    expect(idempotency.begin).not.toHaveBeenCalled();
  });

  it("runs it under the key with the route's success status, fingerprinting the path", async () => {
    const things = new Things();
    const idempotency = service();
    setService(things, idempotency);
    await call(things.create).call(things, 'fern', request('/things', 'k'));
    await call(things.remove).call(things, '7', request('/things/7', 'k'));
    await call(things.remove).call(things, '8', request('/things/8', 'k'));
    expect(idempotency.calls.map((call) => call.status)).toEqual([200, 204, 204]);
    expect(new Set(idempotency.calls.map((call) => call.fingerprint)).size).toBe(3);
  });
});

/** A handler as Nest calls it: its own arguments, then the request. */
const call = (handler: (id: string) => Promise<unknown>) =>
  handler as unknown as (this: Things, value: string, req: Request) => Promise<unknown>;

/** What the injector does: the service on the property the decorator asked for. */
function setService(controller: object, idempotency: unknown): void {
  const properties = Reflect.getMetadata('self:properties_metadata', Things) as { key: string | symbol }[];
  for (const { key } of properties) (controller as Record<string | symbol, unknown>)[key] = idempotency;
}
