/**
 * Every scope a token can carry, with what it allows. The command line, the bearer guard, the
 * routes' OpenAPI text (@RequireScopes) and Swagger UI's scope list all read this record: a new
 * scope is a line here and the @RequireScopes of the routes that need it.
 */
export const SCOPES = {
  'plants:read': 'List plants',
  'plants:write': 'Create and delete plants',
  'webhooks:manage': 'Subscribe to plant events and read their deliveries',
} as const satisfies Record<string, string>;

export type Scope = keyof typeof SCOPES;

/** The scope names, in the record's order. */
export const SCOPE_NAMES = Object.keys(SCOPES) as Scope[];

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPES, value);
}
