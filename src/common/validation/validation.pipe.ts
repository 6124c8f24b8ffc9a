import { ArgumentMetadata, BadRequestException, ValidationError, ValidationPipe } from '@nestjs/common';

function messages(errors: ValidationError[], parent = ''): string[] {
  return errors.flatMap((error) => {
    const path = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) =>
      parent ? `${parent}.${message}` : message,
    );
    return [...own, ...messages(error.children ?? [], path)];
  });
}

/** Parameters typed `bigint` are read by ParseInt64Pipe; class-validator has no BigInt class to apply. */
class AppValidationPipe extends ValidationPipe {
  protected override toValidate(metadata: ArgumentMetadata): boolean {
    return (metadata.metatype as unknown) !== BigInt && super.toValidate(metadata);
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
      const list = messages(errors);
      return new BadRequestException(list.length > 0 ? list.join('; ') : 'Invalid request');
    },
  });
}
