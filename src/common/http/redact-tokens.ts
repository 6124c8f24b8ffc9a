/**
 * The one redaction of what a log line, a trace span or an error message may quote of a request or
 * of another party's URL: a path, a query, a URL, a header value. A token pasted into a URL must
 * reach neither the log nor a trace.
 *
 * Path segments shaped like a credential: this service's tokens (`pst_` and base64url) and JWTs
 * (three base64url parts, the first a JSON header, so `eyJ`).
 */
const TOKEN_SHAPED = /pst_[A-Za-z0-9_-]*|eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/gi;
const REDACTED = '[redacted]';

/** Request paths longer than this are cut where they are written: a path may be up to 16 KiB. */
export const MAX_LOGGED_PATH = 200;

/** A percent-encoded letter, digit or one of `-._~`, which RFC 3986 (2.3) makes the same as the character. */
const ENCODED_UNRESERVED = /%(?:[46][1-9a-f]|[57][0-9a]|3[0-9]|2[de]|5f|7e)/gi;

/** The text with whatever looks like a token replaced; ordinary paths are returned as they are. */
export function redactTokens(text: string): string {
  // Every token shape has a `_` (pst_) or dots (JWT), written as such or percent-encoded (`%5F`,
  // `%2E`): most paths have none of them.
  if (text.indexOf('_') === -1 && text.indexOf('.') === -1 && text.indexOf('%') === -1) return text;
  // `/plants/pst%5F…` reaches the same route with the same token as `/plants/pst_…`: the token is
  // looked for in the text with such escapes decoded, and where one is found that text is written.
  const decoded = text.indexOf('%') === -1 ? text : text.replace(ENCODED_UNRESERVED, decodeURIComponent);
  TOKEN_SHAPED.lastIndex = 0;
  return TOKEN_SHAPED.test(decoded) ? decoded.replace(TOKEN_SHAPED, REDACTED) : text;
}

/**
 * A request's path as a log line or an error's log line writes it: from its URL (`originalUrl`, or
 * `url` before Express), without the query string, tokens redacted, cut at MAX_LOGGED_PATH.
 */
export function loggedPath(url: string): string {
  const query = url.indexOf('?');
  const path = redactTokens(query === -1 ? url : url.slice(0, query));
  return path.length > MAX_LOGGED_PATH ? `${path.slice(0, MAX_LOGGED_PATH)}…` : path;
}

/**
 * Another party's URL (the identity provider's) as a log line or an error message may write it:
 * scheme, host, port and path (tokens redacted); a user name, a password, a query and a fragment,
 * where such URLs carry their secrets, are replaced. Text that is not a URL is written as
 * `[redacted]`.
 */
export function redactUrl(url: string): string {
  const parsed = URL.parse(url);
  if (parsed === null) return REDACTED;
  const { username, password, search, hash } = parsed;
  // Written as it was given (URL would normalise it), so it reads as configured.
  if (username === '' && password === '' && search === '' && hash === '') return redactTokens(url);
  const userinfo = username !== '' || password !== '' ? `${REDACTED}@` : '';
  const after = search !== '' ? `?${REDACTED}` : hash !== '' ? `#${REDACTED}` : '';
  // `host` keeps the port and the brackets of an IPv6 address.
  return `${parsed.protocol}//${userinfo}${parsed.host}${redactTokens(parsed.pathname)}${after}`;
}
