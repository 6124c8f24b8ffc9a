/** `pst_` tokens of this service, or JWT access tokens of the identity provider (OIDC_ISSUER). */
export type TokenKind = 'pst' | 'jwt';

/** Who is calling: the subject of the bearer token (the owner of plants) and what it may do. */
export interface Principal {
  subject: string;
  scopes: readonly string[];
  kind: TokenKind;
  tokenId: string;
}

export const REALM = 'plant-store';
