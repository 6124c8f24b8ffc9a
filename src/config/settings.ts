import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  MinLength,
  Validate,
  ValidateIf,
  ValidationArguments,
  ValidatorConstraint,
  ValidatorConstraintInterface,
  validateSync,
} from 'class-validator';
import { redactCredentials } from '../common/redact-credentials';
import { DurationRules, parseDuration } from './duration';

/**
 * One environment variable: the rules its text must pass (class-validator), how a valid text (or the
 * default, when unset) becomes its typed value, and what the docs and `.env.example` say of it.
 */
export interface Setting<T> {
  readonly rules: readonly PropertyDecorator[];
  /** Decimal integers are converted to numbers before the rules see them. */
  readonly integer: boolean;
  /** The default as the variable would be written; undefined when there is none, or it is derived. */
  readonly default: string | undefined;
  /** The value when the variable is unset. */
  readonly defaultValue: T;
  /**
   * The least and the most an integer or a duration may be (a duration in milliseconds), as its
   * rules hold it to; undefined for a setting without such a bound.
   */
  readonly min?: number;
  readonly max?: number;
  /** The typed value of a text that passed the rules, or the default for undefined. */
  readonly read: (value: unknown) => T;
  /** A value never echoed in an error, not even in part. */
  readonly secret: boolean;
  readonly doc: SettingDoc;
}

export interface SettingDoc {
  /** What the variable does, in markdown: the docs table's meaning column. */
  description: string;
  /** The docs' default column when the default is not one value (unset, or derived from another setting). */
  defaultText?: string;
  /** The value `.env.example` shows, when not the default. */
  example?: string;
  /** A line `.env.example` adds under the variable. */
  note?: string;
}

interface Documented extends SettingDoc {
  secret?: boolean;
}

/** A setting without a default may be undefined; with one, never. */
type Typed<Options, T> = Options extends { default: unknown } ? T : T | undefined;

export type SettingsTable = Readonly<Record<string, Setting<unknown>>>;

export type SettingValues<Table extends SettingsTable> = {
  -readonly [Name in keyof Table]: Table[Name] extends Setting<infer T> ? T : never;
};

function define<T>(
  options: Documented & { default?: string | number | boolean; min?: number; max?: number },
  rules: PropertyDecorator[],
  parse: (text: string) => T,
  integer = false,
): Setting<T> {
  const text = options.default === undefined ? undefined : String(options.default);
  const defaultValue = (text === undefined ? undefined : parse(text)) as T;
  return {
    rules,
    integer,
    default: text,
    defaultValue,
    min: options.min,
    max: options.max,
    read: (value) => (value === undefined ? defaultValue : parse(String(value))),
    secret: options.secret ?? false,
    doc: {
      description: options.description,
      defaultText: options.defaultText,
      example: options.example,
      note: options.note,
    },
  };
}

export function integer<const O extends Documented & { min: number; max: number; default?: number }>(
  options: O,
): Setting<Typed<O, number>> {
  // One message for the three rules: a wrong value is one line, whichever rule it breaks first.
  const message = `$property must be an integer from ${options.min} to ${options.max}`;
  return define(
    options,
    [IsOptional(), IsInt({ message }), Min(options.min, { message }), Max(options.max, { message })],
    Number,
    true,
  );
}

export function oneOf<const V extends readonly string[], const O extends Documented & { default?: V[number] }>(
  values: V,
  options: O,
): Setting<Typed<O, V[number]>> {
  return define(options, [IsOptional(), IsIn(values)], (text) => text as V[number]);
}

/** `true` or `false`. */
export function flag(options: Documented & { default: boolean }): Setting<boolean> {
  return define(options, [IsOptional(), IsIn(['true', 'false'])], (text) => text === 'true');
}

/**
 * A non-empty text; with `pattern`, one that matches it; with `requiredWith`, one that must be set
 * when that other variable is. Messages may say `$property` for the variable's name.
 */
export function text<
  const O extends Documented & { default?: string; pattern?: RegExp; requiredWith?: string; message?: string },
>(options: O): Setting<Typed<O, string>> {
  const { pattern, requiredWith, message } = options;
  const rules = requiredWith
    ? [
        ValidateIf((env: Record<string, unknown>, value) => value !== undefined || env[requiredWith] !== undefined),
        IsString({ message }),
      ]
    : pattern
      ? [IsOptional(), Matches(pattern, { message })]
      : [IsOptional(), IsString(), MinLength(1)];
  return define(options, rules, (value) => value);
}

@ValidatorConstraint({ name: 'parses' })
class Parses implements ValidatorConstraintInterface {
  validate(value: unknown, args: ValidationArguments): boolean {
    const [parse] = args.constraints as [(text: string) => unknown];
    return typeof value === 'string' && parse(value) !== undefined;
  }
}

/**
 * A text that `parse` turns into a value, undefined meaning invalid. The message may depend on the
 * refused text, and may say `$property` for the variable's name.
 */
export function parsed<
  T,
  const O extends Documented & { default?: string; message: string | ((text: string) => string) },
>(parse: (text: string) => T | undefined, options: O): Setting<Typed<O, T>> {
  const { message } = options;
  const rule = Validate(Parses, [parse], {
    message: typeof message === 'string' ? message : (args: ValidationArguments) => message(String(args.value)),
  });
  return define(options, [IsOptional(), rule], (value) => parse(value) as T);
}

/** A duration such as `5s`, `30m` or `2h` (units ms, s, m, h, d), in milliseconds. */
export function duration<
  const O extends Documented & Omit<DurationRules, 'lenient'> & { default?: string; message: string },
>(options: O): Setting<Typed<O, number>> {
  const rules: DurationRules = { units: options.units, min: options.min, max: options.max, lenient: true };
  return parsed((value) => parseDuration(value, rules), options);
}

/** Every wrong variable, each named at the start of one line of its own, with the value it had. */
export class ConfigValidationError extends Error {
  override name = 'ConfigValidationError';

  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  }
}

/** The class-validator target of a table: one decorated property per variable. */
const targets = new WeakMap<SettingsTable, new () => object>();

function targetOf(table: SettingsTable): new () => object {
  let target = targets.get(table);
  if (!target) {
    target = class EnvironmentVariables {};
    for (const [name, setting] of Object.entries(table)) {
      for (const rule of setting.rules) rule(target.prototype, name);
    }
    targets.set(table, target);
  }
  return target;
}

/** Empty strings count as unset, so `PORT=` in a .env file means "use the default". */
function textOf(value: unknown): unknown {
  return value === '' ? undefined : value;
}

/** Integers only when written as integers: "3000abc" or "1e3" must not slip through as numbers. */
function integerOf(value: unknown): unknown {
  return typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : value;
}

/** A wrong URL is echoed in the error, so the password it may carry is masked first. */
function quoted(value: unknown, setting: Setting<unknown>): string {
  if (typeof value !== 'string') return JSON.stringify(value);
  if (setting.secret) return JSON.stringify(`*** (${value.length} characters)`);
  return JSON.stringify(redactCredentials(value));
}

/**
 * The typed values of a table's variables, read from `raw`; every wrong one is named at once in a
 * ConfigValidationError, one line each, with the value it had.
 */
export function readSettings<Table extends SettingsTable>(
  table: Table,
  raw: Record<string, unknown>,
): SettingValues<Table> {
  const env = new (targetOf(table))() as Record<string, unknown>;
  for (const [name, setting] of Object.entries(table)) {
    const value = textOf(raw[name]);
    env[name] = setting.integer ? integerOf(value) : value;
  }
  // The first rule a variable breaks says what it must be: one line for each wrong variable.
  const errors = validateSync(env, { skipMissingProperties: false, stopAtFirstError: true });
  if (errors.length > 0) {
    throw new ConfigValidationError(
      errors.flatMap((error) =>
        Object.values(error.constraints ?? {}).map(
          (message) => `${message} (got ${quoted(raw[error.property], table[error.property])})`,
        ),
      ),
    );
  }
  return Object.fromEntries(
    Object.entries(table).map(([name, setting]) => [name, setting.read(env[name])]),
  ) as SettingValues<Table>;
}
