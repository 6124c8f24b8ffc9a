import { HttpException } from '@nestjs/common';

/** A failure as the OpenAPI document shows it: its status, when it happens, and what a client reads. */
export interface ErrorDoc {
  /** The named error's class: the name of its example in the document. */
  name: string;
  status: number;
  description: string;
  /** The message, as the service sends it for example arguments. */
  example: string;
}

/**
 * The documented form of a named error, made from an instance with example arguments: the
 * document (and docs/, checked by src/docs/documented-messages.spec.ts) shows the very message the
 * service sends.
 */
export function errorDoc(example: HttpException, description: string): ErrorDoc {
  return { name: example.constructor.name, status: example.getStatus(), description, example: example.message };
}
