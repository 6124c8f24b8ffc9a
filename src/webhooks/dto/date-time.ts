import { ValidateBy, ValidationArguments } from 'class-validator';

/** RFC 3339's date-time: a date, a time (seconds and fractions optional) and a zone (`Z` or an offset). */
const DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,9})?)?(Z|[+-]\d\d:\d\d)$/i;

/** The epoch milliseconds of an RFC 3339 date-time, or undefined when the text is not one. */
export function parseDateTime(value: unknown): number | undefined {
  if (typeof value !== 'string' || !DATE_TIME.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

/** A date and time with its zone, such as `2026-11-24T09:30:00Z`. */
export function IsDateTime(): PropertyDecorator {
  return ValidateBy({
    name: 'isDateTime',
    validator: {
      validate: (value: unknown) => parseDateTime(value) !== undefined,
      defaultMessage: (args?: ValidationArguments) =>
        `${args?.property} must be a date and time with its time zone, such as 2026-11-24T09:30:00Z`,
    },
  });
}
