import type { WithResponse } from './response';

/**
 * What a call returns: a promise of its data that can also give the answer's metadata,
 * `await store.plants.create(plant).withResponse()` → `{ data, response }`. Either way the request
 * is sent once, when the call is made.
 */
export interface ApiPromise<T> extends Promise<T> {
  withResponse(): Promise<WithResponse<T>>;
}

export class CallPromise<T> extends Promise<T> implements ApiPromise<T> {
  // `then` and friends give plain promises, never another CallPromise (whose constructor differs).
  static override get [Symbol.species](): PromiseConstructor {
    return Promise;
  }

  readonly #result: Promise<WithResponse<T>>;
  #data?: Promise<T>;

  constructor(result: Promise<WithResponse<T>>) {
    // The promise this object is settles with nothing and is never looked at: `then` reads #result.
    super((resolve) => resolve(undefined as T));
    this.#result = result;
  }

  withResponse(): Promise<WithResponse<T>> {
    return this.#result;
  }

  override then<A = T, B = never>(
    onFulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    // Made on first use only: a caller that only asks withResponse() leaves no second promise to
    // reject unhandled.
    this.#data ??= this.#result.then(({ data }) => data);
    return this.#data.then(onFulfilled, onRejected);
  }

  override catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.then(undefined, onRejected);
  }

  override finally(onFinally?: (() => void) | null): Promise<T> {
    return this.then().finally(onFinally);
  }
}
