import { ArgumentMetadata, BadRequestException, Injectable, PipeTransform } from '@nestjs/common';
import { INT64_MAX, INT64_MIN, parseInt64 } from '../int64';

/** Reads a path parameter as an exact int64 (never through a double). */
@Injectable()
export class ParseInt64Pipe implements PipeTransform<string, bigint> {
  transform(value: string, metadata: ArgumentMetadata): bigint {
    const parsed = parseInt64(value);
    if (parsed === null) {
      throw new BadRequestException(
        `${metadata.data ?? 'value'} must be an integer from ${INT64_MIN} to ${INT64_MAX}`,
      );
    }
    return parsed;
  }
}
