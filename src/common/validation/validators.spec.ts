import { validate } from 'class-validator';
import { INT64_MAX, INT64_MIN } from '../int64';
import { IsInt64, IsText } from './validators';

class Sample {
  @IsInt64()
  id: unknown = 1n;

  @IsText(1, 5)
  name: unknown = 'abc';

  @IsInt64({ each: true })
  ids: unknown = [];
}

async function problems(fields: Partial<Sample>): Promise<Record<string, string>> {
  const errors = await validate(Object.assign(new Sample(), fields));
  return Object.fromEntries(
    errors.flatMap((error) =>
      Object.entries(error.constraints ?? {}).map(([name, message]) => [`${error.property}.${name}`, message]),
    ),
  );
}

const INT64_MESSAGE = 'id must be an integer from -9223372036854775808 to 9223372036854775807';

describe(IsInt64.name, () => {
  it.each([0n, -1n, INT64_MIN, INT64_MAX])('accepts %p', async (id) => {
    await expect(problems({ id })).resolves.toEqual({});
  });

  it.each([INT64_MAX + 1n, INT64_MIN - 1n, 5, 1.5, '5', null, undefined, true])('refuses %p', async (id) => {
    await expect(problems({ id })).resolves.toEqual({ 'id.isInt64': INT64_MESSAGE });
  });

  it('names each element of an array when used with each', async () => {
    await expect(problems({ ids: [1n, 2n] })).resolves.toEqual({});
    await expect(problems({ ids: [1n, '2'] })).resolves.toEqual({
      'ids.isInt64': 'each value in ids must be an integer from -9223372036854775808 to 9223372036854775807',
    });
  });
});

describe(IsText.name, () => {
  it.each(['a', 'abc', 'abcde', ' a ', '🌵🌵🌵🌵🌵', 'née'])('accepts %p', async (name) => {
    await expect(problems({ name })).resolves.toEqual({});
  });

  it.each([
    ['', 'name must be from 1 to 5 characters long'],
    ['abcdef', 'name must be from 1 to 5 characters long'],
    // Six code points, twelve UTF-16 units: the limit is on characters.
    ['🌵🌵🌵🌵🌵🌵', 'name must be from 1 to 5 characters long'],
    [' ', 'name must not be blank'],
    ['\t\n ', 'name must not be blank'],
    ['\u00a0\u3000', 'name must not be blank'],
    ['a\ud800', 'name must be valid Unicode text'],
    ['\udc00', 'name must be valid Unicode text'],
    [42, 'name must be a string'],
    [null, 'name must be a string'],
    [['abc'], 'name must be a string'],
  ])('refuses %p: %s', async (name, message) => {
    await expect(problems({ name })).resolves.toEqual({ 'name.isText': message });
  });
});
