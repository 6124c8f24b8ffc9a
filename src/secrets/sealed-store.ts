/** One stored sealed value and where it is, in its store's terms. */
export interface SealedValue<Ref> {
  ref: Ref;
  sealed: string;
}

/**
 * Where one kind of sealed value is kept (a table's column), as resealing needs it: each owner of
 * such values declares its store, SecretsService.reseal does the rest. Both calls are single short
 * statements, so resealing can run while instances serve.
 */
export interface SealedStore<Ref> {
  /** What the values are, for the operator: "webhook signing secrets". */
  readonly name: string;
  /**
   * Up to `limit` values whose sealed text does not start with `prefix` (the sealing key's, see
   * sealedPrefix), in a fixed order of their refs, after `after` (from the first without it).
   * Values no request will read again (an expired answer) may be left out.
   */
  listNotSealedUnder(prefix: string, after: Ref | undefined, limit: number): Promise<SealedValue<Ref>[]>;
  /** Stores `resealed` in place of `sealed` only if the value is still `sealed`; whether it did. */
  replace(ref: Ref, sealed: string, resealed: string): Promise<boolean>;
}

/** What resealing one store did. */
export interface ResealReport {
  name: string;
  /** Now sealed under the sealing key. */
  resealed: number;
  /** Changed or deleted between the read and the write (by a request meanwhile): a second run looks again. */
  changed: number;
  /** Left as they were, sealed under keys this configuration does not hold: how many under each key id. */
  unknownKeys: Record<string, number>;
  /** Left as they were, malformed or altered: no key opens them. */
  unreadable: number;
}
