import { Type } from '@nestjs/common';
import { DECORATORS } from '@nestjs/swagger';

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
 * per DTO: the returned function only copies.
 */
export function viewAs<T extends object>(dto: Type<T>): (value: object) => T {
  const properties = declaredProperties(dto);
  return (value) => {
    const view: Record<string, unknown> = {};
    for (const property of properties) {
      const field = (value as Record<string, unknown>)[property];
      if (field !== null && field !== undefined) view[property] = field;
    }
    return view as T;
  };
}
