/**
 * Path segments shaped like a credential: this service's tokens (`pst_` and base64url) and JWTs
 * (three base64url parts, the first a JSON header, so `eyJ`). A token pasted into a URL must reach
 * neither the log nor a trace.
 */
const TOKEN_SHAPED = /pst_[A-Za-z0-9_-]*|eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/gi;
const REDACTED = '[redacted]';

/** The text with whatever looks like a token replaced; ordinary paths are returned as they are. */
export function redactTokens(path: string): string {
  // Every token shape has a `_` (pst_) or dots (JWT): most paths have neither.
  if (path.indexOf('_') === -1 && path.indexOf('.') === -1) return path;
  TOKEN_SHAPED.lastIndex = 0;
  return TOKEN_SHAPED.test(path) ? path.replace(TOKEN_SHAPED, REDACTED) : path;
}
