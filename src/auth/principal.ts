/** Who is calling: the subject of the bearer token and what it may do. */
export interface Principal {
  subject: string;
  scopes: readonly string[];
  tokenId: string;
}

export const SCOPES = ['plants:read', 'plants:write'] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

export const REALM = 'plant-store';
