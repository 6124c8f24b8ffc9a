import { ArgumentMetadata, BadRequestException, ValidationError, ValidationPipe } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { ValidatorOptions, validateSync } from 'class-validator';
import { InvalidRequest } from './validation.errors';

function messages(errors: ValidationError[], parent = ''): string[] {
  return errors.flatMap((error) => {
    const path = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => (parent ? `${parent}.${message}` : message));
    return [...own, ...messages(error.children ?? [], path)];
  });
}

/**
 * Keys class-transformer drops silently instead of passing them on to be reported as unknown
 * properties: `prototype`, and any name the DTO instance would inherit (`__proto__`, `constructor`,
 * `valueOf`, `toString` and every other `Object.prototype` member).
 */
function inheritedKeys(value: object, metatype: ArgumentMetadata['metatype']): string[] {
  const prototype = (metatype?.prototype ?? Object.prototype) as object;
  return Object.keys(value).filter((key) => key === 'prototype' || key in prototype);
}

/**
 * Nest's ValidationPipe, with the DTOs of this service validated the short way. Nest's pipe is
 * general: on every call it works out again what the value is (nil, primitive, binary, sparse
 * array, prototype keys) and copies its options, which cost a list request as much as
 * class-transformer and class-validator themselves. A DTO here is always a JSON object or a query
 * string's object, whose shape the checks below settle (prototype keys refused, no binary values
 * or gaps possible): it goes straight to class-transformer and class-validator with the pipe's own
 * options. Anything else takes Nest's way.
 *
 * Parameters typed `bigint` are read by ParseInt64Pipe; class-validator has no BigInt class to apply.
 */
class AppValidationPipe extends ValidationPipe {
  protected override toValidate(metadata: ArgumentMetadata): boolean {
    return (metadata.metatype as unknown) !== BigInt && super.toValidate(metadata);
  }

  /**
   * A DTO body is a JSON object; arrays and scalars are refused before class-transformer sees them.
   * The value of a custom parameter decorator (the caller's principal) is neither validated nor
   * converted (validateCustomDecorators is off): it is handed back at once.
   */
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'custom' && metadata.data === undefined) return value;
    const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
    if (metadata.type === 'body' && this.toValidate(metadata) && value !== undefined && !isObject) {
      throw new BadRequestException('Request body must be a JSON object');
    }
    if (isObject && (metadata.type === 'body' || metadata.type === 'query') && this.toValidate(metadata)) {
      const reserved = inheritedKeys(value, metadata.metatype);
      if (reserved.length > 0) {
        throw new InvalidRequest(reserved.map((key) => `property ${key} should not exist`));
      }
      return this.toDto(value, metadata.metatype as new () => object);
    }
    return super.transform(value, metadata);
  }

  /** The DTO made from `value` and validated, as Nest's pipe would make it with these options. */
  private toDto(value: object, metatype: new () => object): object {
    const dto = plainToInstance(metatype, value, this.transformOptions);
    const errors = this.validate(dto, this.validatorOptions);
    if (errors.length > 0) throw this.exceptionFactory(errors);
    return dto;
  }

  /**
   * class-validator's synchronous run, which skips the promise machinery of its asynchronous one:
   * no rule of this service is asynchronous (validation.pipe.spec.ts holds every DTO to that).
   */
  protected override validate(object: object, options?: ValidatorOptions): ValidationError[] {
    return validateSync(object, options);
  }
}

/**
 * Strict by design: unknown fields are refused (no mass assignment), nothing is converted
 * implicitly (a string "5" is not an id), and every problem is named in one readable message.
 */
export function createValidationPipe(): ValidationPipe {
  return new AppValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => {
      // Several constraints of one field may share a message (limit's integer and range checks).
      const list = [...new Set(messages(errors))];
      return new InvalidRequest(list);
    },
  });
}
