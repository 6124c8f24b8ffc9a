import { BadRequestException } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ParseInt64Pipe } from './parse-int64.pipe';

describe(ParseInt64Pipe.name, () => {
  let pipe: ParseInt64Pipe;

  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({ providers: [ParseInt64Pipe] }).compile();
    pipe = moduleRef.get(ParseInt64Pipe);
  });

  it.each([
    ['5', 5n],
    ['-9223372036854775808', -9223372036854775808n],
    ['9223372036854775807', 9223372036854775807n],
  ])('reads %p as %p', (text, expected) => {
    expect(pipe.transform(text, { type: 'param', data: 'id' })).toBe(expected);
  });

  it.each(['abc', '1.5', '+5', '9223372036854775808', ''])('refuses %p naming the parameter', (text) => {
    expect(() => pipe.transform(text, { type: 'param', data: 'id' })).toThrow(
      new BadRequestException('id must be an integer from -9223372036854775808 to 9223372036854775807'),
    );
    expect(() => pipe.transform(text, { type: 'param', data: 'id' })).toThrow(BadRequestException);
  });

  it('says "value" when the parameter has no name', () => {
    expect(() => pipe.transform('x', { type: 'param' })).toThrow(
      'value must be an integer from -9223372036854775808 to 9223372036854775807',
    );
  });
});
