import { INT64_MAX, INT64_MIN, int64Transformer, isInt64, parseInt64 } from './int64';

describe('int64', () => {
  describe(isInt64.name, () => {
    it.each([0n, 1n, -1n, INT64_MIN, INT64_MAX])('accepts the bigint %p', (value) => {
      expect(isInt64(value)).toBe(true);
    });

    it.each([INT64_MIN - 1n, INT64_MAX + 1n, 0, 5, 1.5, '5', null, undefined, {}])('refuses %p', (value) => {
      expect(isInt64(value)).toBe(false);
    });
  });

  describe(parseInt64.name, () => {
    it.each([
      ['0', 0n],
      ['42', 42n],
      ['-7', -7n],
      ['-0', 0n],
      ['9223372036854775807', INT64_MAX],
      ['-9223372036854775808', INT64_MIN],
      // Leading zeros are harmless as long as the text stays within 24 characters.
      ['000000000000000000000042', 42n],
      ['-0009223372036854775808', INT64_MIN],
    ])('reads %p as %p', (text, expected) => {
      expect(parseInt64(text)).toBe(expected);
    });

    it.each([
      '9223372036854775808',
      '-9223372036854775809',
      '18446744073709551616',
      '+5',
      ' 5',
      '5 ',
      '1e3',
      '1.5',
      '0x10',
      '',
      '-',
      '--5',
      '5-',
      '١٢',
      '0000000000000000000000042',
      '1234567890123456789012345',
    ])('refuses %p', (text) => {
      expect(parseInt64(text)).toBeNull();
    });

    it.each([5, 5n, null, undefined, ['5'], { toString: () => '5' }])('refuses the non-string %p', (value) => {
      expect(parseInt64(value)).toBeNull();
    });
  });

  describe('int64Transformer', () => {
    it.each([
      ['9223372036854775807', INT64_MAX],
      ['-9223372036854775808', INT64_MIN],
      [42, 42n],
      [42n, 42n],
      [null, null],
    ])('reads the column value %p as %p', (raw, expected) => {
      expect(int64Transformer.from(raw)).toBe(expected);
    });

    it('reads a decimal string beyond 2^53 without rounding', () => {
      expect(int64Transformer.from('9007199254740993')).toBe(9007199254740993n);
    });

    it('writes values unchanged', () => {
      expect(int64Transformer.to(INT64_MAX)).toBe(INT64_MAX);
      expect(int64Transformer.to(undefined)).toBeUndefined();
    });
  });
});
