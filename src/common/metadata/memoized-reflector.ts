import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';

type MetadataKey = Parameters<Reflector['get']>[0];

/**
 * Nest's Reflector, remembering each answer. Route metadata (@Public, @RequireScopes, the
 * throttler's settings) is written by decorators when the classes are defined and never changes
 * afterwards, yet the global guards read it on every request: a dozen reflect-metadata lookups,
 * each walking prototype chains, a few percent of a request's CPU (bench/RESULTS.md). Provided
 * as the app's Reflector in AppModule, so the guards read it through the API they already use.
 */
@Injectable()
export class MemoizedReflector extends Reflector {
  private readonly answers = new Map<unknown, WeakMap<object, unknown>>();

  override get<T = unknown>(metadataKeyOrDecorator: MetadataKey, target: object): T {
    let byTarget = this.answers.get(metadataKeyOrDecorator);
    if (byTarget === undefined) {
      byTarget = new WeakMap();
      this.answers.set(metadataKeyOrDecorator, byTarget);
    }
    if (byTarget.has(target)) return byTarget.get(target) as T;
    const value = super.get(metadataKeyOrDecorator, target as never) as T;
    byTarget.set(target, value);
    return value;
  }
}
