import { SetMetadata, applyDecorators } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';

/** An operation's deprecation: when it began, when the operation may go, and where to read about it. */
export interface DeprecationNotice {
  /** The day it is deprecated from, `YYYY-MM-DD` (00:00 UTC); it may be ahead. */
  since: string;
  /** The day from which it may stop answering, `YYYY-MM-DD` (00:00 UTC); not before `since`. */
  sunset: string;
  /** A page for people: why, and what to use instead. */
  link?: string;
}

/** The response fields a deprecated operation's answers carry, by name. */
export interface DeprecationFields {
  /** RFC 9745: a structured-field Date, `@` and seconds since 1970. */
  Deprecation: string;
  /** RFC 8594: an HTTP-date. */
  Sunset: string;
  /** RFC 9745's `deprecation` link relation, when the notice has a link. */
  Link?: string;
}

export const DEPRECATION_KEY = 'deprecation';
/** How the notice reaches the OpenAPI document, which turns it into OpenAPI's own markers (deprecation-document.ts). */
export const DEPRECATION_EXTENSION = 'x-deprecation';

/**
 * Deprecates an operation: the OpenAPI document marks it `deprecated` and declares the fields below
 * on its answers, and every answer of its route carries `Deprecation`, `Sunset` and, with a link,
 * `Link: <...>; rel="deprecation"` (DeprecatedRoutes mounts them at start-up). A malformed notice
 * fails when the controller is loaded.
 */
export function Deprecated(notice: DeprecationNotice): MethodDecorator {
  deprecationFields(notice);
  return applyDecorators(SetMetadata(DEPRECATION_KEY, notice), ApiExtension(DEPRECATION_EXTENSION, notice));
}

export function deprecationFields({ since, sunset, link }: DeprecationNotice): DeprecationFields {
  const from = day('since', since);
  const until = day('sunset', sunset);
  // RFC 9745, "Sunset": its time must not be earlier than the deprecation's.
  if (until < from) throw new Error(`@Deprecated: sunset ${sunset} is before since ${since}`);
  if (link !== undefined && !/^[^\s<>"]+$/.test(link)) {
    throw new Error(`@Deprecated: link must be a URI reference without spaces, quotes or angle brackets: ${link}`);
  }
  return {
    Deprecation: `@${from.getTime() / 1000}`,
    Sunset: until.toUTCString(),
    ...(link === undefined ? {} : { Link: `<${link}>; rel="deprecation"` }),
  };
}

function day(name: string, value: string): Date {
  const date = new Date(`${value}T00:00:00Z`);
  // A day that does not exist (2027-02-30) rolls over into another one: refused, not moved.
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(date.getTime()) || !date.toISOString().startsWith(value)) {
    throw new Error(`@Deprecated: ${name} must be a day written YYYY-MM-DD, not ${JSON.stringify(value)}`);
  }
  return date;
}
