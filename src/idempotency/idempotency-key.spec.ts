import { BadRequestException } from '@nestjs/common';
import { canonicalJson, parseIdempotencyKey, requestFingerprint } from './idempotency-key';

describe(parseIdempotencyKey.name, () => {
  it.each(['a', '8e03978e-40d5-43e8-bc93-6894a57f9324', '"quoted"', '!~', 'k'.repeat(255)])('accepts %p', (key) => {
    expect(parseIdempotencyKey(key)).toBe(key);
  });

  it.each(['', ' ', 'a b', 'tab\there', 'é', 'k'.repeat(256), 'a, b', '\x7f'])('refuses %p', (key) => {
    expect(() => parseIdempotencyKey(key)).toThrow(BadRequestException);
  });

  it('refuses a header given as a list', () => {
    expect(() => parseIdempotencyKey(['a', 'b'])).toThrow(BadRequestException);
  });
});

describe(canonicalJson.name, () => {
  it('sorts members at every level and keeps int64 digits exact', () => {
    expect(canonicalJson({ b: [{ d: 1, c: 2 }], a: 9223372036854775807n, e: null })).toBe(
      '{"a":9223372036854775807,"b":[{"c":2,"d":1}],"e":null}',
    );
  });

  it('drops undefined members, as JSON does', () => {
    expect(canonicalJson({ a: undefined, b: 'x' })).toBe('{"b":"x"}');
  });
});

describe(requestFingerprint.name, () => {
  it('is the same for the same request whatever its member order', () => {
    expect(requestFingerprint('POST', '/plants', { id: 1n, name: 'Fern' })).toBe(
      requestFingerprint('POST', '/plants', { name: 'Fern', id: 1n }),
    );
  });

  it('tells apart bodies, routes and methods', () => {
    const base = requestFingerprint('POST', '/plants', { id: 1n });
    expect(requestFingerprint('POST', '/plants', { id: 2n })).not.toBe(base);
    expect(requestFingerprint('POST', '/webhooks', { id: 1n })).not.toBe(base);
    expect(requestFingerprint('PUT', '/plants', { id: 1n })).not.toBe(base);
    expect(requestFingerprint('POST', '/plants', undefined)).not.toBe(base);
  });
});
