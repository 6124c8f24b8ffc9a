/** A URL's user information (`scheme://user:password@`), up to the line's last `@`: too much rather than too little. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/).*@/gi;
/** A `password=` parameter of a URL or connection string (`sentinelPassword=` too). */
const PASSWORD_PARAMETER = /((?:^|[?&;\s])[a-z_]*password=)[^&#;\s]*/gi;

/**
 * The text with the credentials of any URL or connection string in it masked (`mysql://***@db/x`,
 * `password=***`): a setting's value quoted back, or a driver's error that names where it connects,
 * never carries a password to a log or a terminal.
 */
export function redactCredentials(text: string): string {
  return text.replace(URL_CREDENTIALS, '$1***@').replace(PASSWORD_PARAMETER, '$1***');
}
