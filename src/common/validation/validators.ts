import { ValidateBy, ValidationArguments, ValidationOptions, buildMessage } from 'class-validator';
import { int64RangeMessage, isInt64 } from '../int64';

/**
 * An int64 that arrived as a JSON integer literal (parsed to BigInt by the body parser) or was read
 * from a path or query string. Strings like "5", fractions and exponents are refused: no implicit
 * conversion, so a client that sends the wrong type hears about it.
 */
export function IsInt64(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isInt64',
      validator: {
        validate: (value: unknown) => isInt64(value),
        defaultMessage: buildMessage((each) => int64RangeMessage(`${each}$property`), options),
      },
    },
    options,
  );
}

/** What is wrong with a text field of `min`..`max` characters, or null when nothing is (IsText's rule). */
const SURROGATE = /[\uD800-\uDFFF]/;

export function textProblem(value: unknown, min: number, max: number): string | null {
  if (typeof value !== 'string') return 'must be a string';
  if (!value.isWellFormed()) return 'must be valid Unicode text';
  // Length in characters (code points), as MySQL's utf8mb4 VARCHAR counts them: a string without
  // surrogates (nearly every name) has as many as its UTF-16 length, without an array to count them.
  const length = SURROGATE.test(value) ? [...value].length : value.length;
  if (length < min || length > max) return `must be from ${min} to ${max} characters long`;
  if (!/\S/u.test(value)) return 'must not be blank';
  return null;
}

/**
 * A text field: a well-formed Unicode string of `min`..`max` characters that is not only
 * whitespace. Characters are code points, so an emoji counts once, as it does in the database.
 */
export function IsText(min: number, max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isText',
      constraints: [min, max],
      validator: {
        validate: (value: unknown) => textProblem(value, min, max) === null,
        defaultMessage: (args?: ValidationArguments) => `${args?.property} ${textProblem(args?.value, min, max)}`,
      },
    },
    options,
  );
}
