import { HttpException } from '@nestjs/common';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuplicateAuthorization, SigningKeysUnavailable } from '../auth/auth.errors';
import { documents } from '../../scripts/docs/fragments';
import { ErrorDoc } from '../common/openapi/error-doc';
import { InvalidRequest } from '../common/validation/validation.errors';
import {
  IdempotencyKeyInFlight,
  IdempotencyKeyReused,
  IdempotentAnswerUnavailable,
  InvalidIdempotencyKey,
} from '../idempotency/idempotency.errors';
import { PlantAlreadyExists } from '../plants/plants.errors';
import { TooManyRequests } from '../rate-limit/rate-limit.errors';
import { TooManySubscriptions, WebhookHostUnresolved, WebhooksNotConfigured } from '../webhooks/webhooks.errors';

const ROOT = join(__dirname, '..', '..');
const SRC = join(ROOT, 'src');

type ErrorClass = (new (...args: never[]) => HttpException) & { doc?: ErrorDoc };

/** The message a named error sends: for its documented example arguments when it takes any. */
function messageOf(error: ErrorClass): string {
  const message = error.doc?.example ?? (error.length === 0 ? new error().message : undefined);
  if (message === undefined) throw new Error(`${error.name} takes arguments but has no documented example`);
  return message;
}

/** Every named error: the HttpException classes exported by the `*.errors.ts` files of src/. */
async function namedErrors(): Promise<ErrorClass[]> {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.errors.ts'));
  const modules = await Promise.all(files.map((file) => import(join(SRC, file)) as Promise<Record<string, unknown>>));
  return modules
    .flatMap((exports) => Object.values(exports))
    .filter((value): value is ErrorClass => typeof value === 'function' && value.prototype instanceof HttpException);
}

/**
 * Whether a quote holds the message exactly as the service sends it for the documented example
 * arguments: a number is part of the message (a limit it states) as much as its words, so a quote
 * with other numbers is a stale copy, and a quote of a message with arguments uses the example's.
 */
function holdsMessage(quote: string, message: string): boolean {
  return quote.includes(message);
}

/** The code spans and blocks of a Markdown file, where it quotes; a line break inside one is a space. */
function quotesIn(file: string): string[] {
  const markdown = readFileSync(join(ROOT, file), 'utf8');
  return (markdown.match(/```[\s\S]*?```|`[^`]+`/g) ?? []).map((quote) => quote.replace(/\s*\n\s*/g, ' '));
}

/**
 * What a quote cannot hold without quoting the message: the opening of the message's longest
 * stretch without a digit (digits are the examples' arguments), when that is long enough to tell.
 */
function signature(message: string): string | undefined {
  const longest = message
    .split(/\d+/)
    .map((part) => part.trim())
    .reduce((a, b) => (b.length > a.length ? b : a));
  return longest.length >= 20 ? longest.slice(0, 30) : undefined;
}

/** The named errors each document quotes. A new quote of a message in the docs is listed here. */
const QUOTED: Record<string, ErrorClass[]> = {
  'docs/api.md': [
    InvalidRequest,
    TooManySubscriptions,
    WebhookHostUnresolved,
    WebhooksNotConfigured,
    InvalidIdempotencyKey,
    IdempotencyKeyReused,
    IdempotencyKeyInFlight,
    IdempotentAnswerUnavailable,
    DuplicateAuthorization,
    SigningKeysUnavailable,
    TooManyRequests,
  ],
  'docs/webhooks.md': [WebhooksNotConfigured],
  'clients/typescript/README.md': [PlantAlreadyExists],
};

/** Every hand-written document: the one list the docs' facts are checked in too. */
const DOCUMENTS = documents(ROOT);

describe('error messages quoted in the docs', () => {
  let errors: ErrorClass[];
  beforeAll(async () => (errors = await namedErrors()));

  it.each(Object.entries(QUOTED))('%s quotes its named errors as the service sends them', (file, quoted) => {
    const quotes = quotesIn(file);
    const missing = quoted.filter((error) => !quotes.some((quote) => holdsMessage(quote, messageOf(error))));
    expect(missing.map((error) => `${error.name}: ${messageOf(error)}`)).toEqual([]);
  });

  // A quote that begins like a named error's message but says something else is a stale copy.
  it.each(DOCUMENTS)('%s quotes no named error otherwise than as sent', (file) => {
    const quotes = quotesIn(file);
    const stale = errors.flatMap((error) => {
      const message = messageOf(error);
      const mark = signature(message);
      if (mark === undefined) return [];
      return quotes
        .filter((quote) => quote.includes(mark) && !holdsMessage(quote, message))
        .map((quote) => ({ message, quote }));
    });
    expect(stale).toEqual([]);
  });

  it('finds the named errors of every feature', () => {
    const names = errors.map((error) => error.name);
    expect(names).toEqual(
      expect.arrayContaining(['PlantAlreadyExists', 'MissingScope', 'BodyTooLarge', 'InternalError']),
    );
  });
});
