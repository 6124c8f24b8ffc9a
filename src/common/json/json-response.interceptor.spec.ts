import { CallHandler, ExecutionContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { lastValueFrom, of } from 'rxjs';
import { JsonResponseInterceptor } from './json-response.interceptor';

describe(JsonResponseInterceptor.name, () => {
  let interceptor: JsonResponseInterceptor;
  let response: { setHeader: jest.Mock };

  const contextOf = (type: string) =>
    ({ getType: () => type, switchToHttp: () => ({ getResponse: () => response }) }) as unknown as ExecutionContext;
  const handlerOf = (value: unknown): CallHandler => ({ handle: () => of(value) });

  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({ providers: [JsonResponseInterceptor] }).compile();
    interceptor = moduleRef.get(JsonResponseInterceptor);
    response = { setHeader: jest.fn() };
  });

  it('writes bigint values as plain JSON numbers, exactly', async () => {
    const body = [{ id: 9223372036854775807n, name: 'a' }, { id: -1n, name: 'b', tag: 't' }];
    await expect(lastValueFrom(interceptor.intercept(contextOf('http'), handlerOf(body)))).resolves.toBe(
      '[{"id":9223372036854775807,"name":"a"},{"id":-1,"name":"b","tag":"t"}]',
    );
    expect(response.setHeader).toHaveBeenCalledWith('Content-Type', 'application/json; charset=utf-8');
  });

  it.each([undefined, null])('leaves %p alone, for an empty response', async (value) => {
    await expect(lastValueFrom(interceptor.intercept(contextOf('http'), handlerOf(value)))).resolves.toBe(value);
    expect(response.setHeader).not.toHaveBeenCalled();
  });

  it('leaves results outside HTTP alone', async () => {
    const body = { id: 1n };
    await expect(lastValueFrom(interceptor.intercept(contextOf('rpc'), handlerOf(body)))).resolves.toBe(body);
    expect(response.setHeader).not.toHaveBeenCalled();
  });
});
