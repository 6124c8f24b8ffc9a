import { Type } from '@nestjs/common';
import { DECORATORS } from '@nestjs/swagger';
import { compileCopy } from '../compiled-copy';

/**
 * The properties a DTO declares for the OpenAPI document (`@ApiProperty`), those it inherits or
 * takes through a mapped type (`PickType`, `OmitType`, ...) included, in the order declared: the
 * properties of its schema.
 */
export function declaredProperties<T extends object>(dto: Type<T>): Extract<keyof T, string>[] {
  const keys = (Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES_ARRAY, dto.prototype) ?? []) as string[];
  return keys.map((key) => key.slice(1) as Extract<keyof T, string>);
}

/**
 * The DTO's view of an object: the properties the DTO declares, each one that holds a value; one
 * that is null or undefined is left out, as the API leaves out what a resource has not. Made once
 * per DTO, as a copy written for its properties (compileCopy).
 */
export function viewAs<T extends object>(dto: Type<T>): (value: object) => T {
  return compileCopy(
    declaredProperties(dto).map((name) => ({ name })),
    { leaveOutNull: true },
  );
}
