import { Injectable, NestMiddleware } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { inOneLayer } from './in-one-layer';

const calls: string[] = [];

@Injectable()
class Greeting {
  readonly word = 'hello';
}

@Injectable()
class First implements NestMiddleware {
  constructor(private readonly greeting: Greeting) {}
  use(_req: IncomingMessage, _res: ServerResponse, next: () => void): void {
    calls.push(`first ${this.greeting.word}`);
    next();
  }
}

@Injectable()
class Later implements NestMiddleware {
  async use(_req: IncomingMessage, _res: ServerResponse, next: () => void): Promise<void> {
    await Promise.resolve();
    calls.push('later');
    next();
  }
}

@Injectable()
class Refusing implements NestMiddleware {
  async use(): Promise<void> {
    calls.push('refusing');
    throw new Error('refused');
  }
}

@Injectable()
class Answering implements NestMiddleware {
  use(): void {
    calls.push('answering');
  }
}

async function layerOf(...types: (typeof First | typeof Later | typeof Refusing | typeof Answering)[]) {
  const layer = inOneLayer(...types);
  const moduleRef = await Test.createTestingModule({ providers: [Greeting, ...types, layer] }).compile();
  return moduleRef.get<NestMiddleware>(layer);
}

const req = {} as IncomingMessage;
const res = {} as ServerResponse;

describe(inOneLayer.name, () => {
  beforeEach(() => (calls.length = 0));

  it('runs the middleware in order, each built by the injector, then passes the request on', async () => {
    const next = jest.fn(() => calls.push('next'));
    await (await layerOf(First, Later, First)).use(req, res, next);
    expect(calls).toEqual(['first hello', 'later', 'first hello', 'next']);
    expect(next).toHaveBeenCalledWith();
  });

  it('runs synchronous middleware synchronously', async () => {
    const next = jest.fn();
    const result = (await layerOf(First, First)).use(req, res, next);
    expect(next).toHaveBeenCalledTimes(1);
    expect(result).toBeUndefined();
  });

  it('ends the chain at an error, which reaches the caller as the rejection of the layer', async () => {
    const next = jest.fn();
    await expect((await layerOf(First, Refusing, First)).use(req, res, next)).rejects.toThrow('refused');
    expect(calls).toEqual(['first hello', 'refusing']);
    expect(next).not.toHaveBeenCalled();
  });

  it('ends the chain at a middleware that answers the request itself', async () => {
    const next = jest.fn();
    await (await layerOf(First, Answering, First)).use(req, res, next);
    expect(calls).toEqual(['first hello', 'answering']);
    expect(next).not.toHaveBeenCalled();
  });

  it('ends the chain at an error passed to next', async () => {
    @Injectable()
    class Passing implements NestMiddleware {
      use(_req: IncomingMessage, _res: ServerResponse, next: (error?: unknown) => void): void {
        next(new Error('passed'));
      }
    }
    const layer = inOneLayer(Passing, First);
    const moduleRef = await Test.createTestingModule({ providers: [Greeting, Passing, First, layer] }).compile();
    const next = jest.fn();
    expect(() => moduleRef.get<NestMiddleware>(layer).use(req, res, next)).toThrow('passed');
    expect(next).not.toHaveBeenCalled();
  });

  it('is named after its parts', () => {
    expect(inOneLayer(First, Later).name).toBe('First+Later');
  });
});
