import { ArgumentMetadata, BadRequestException, Injectable, PipeTransform } from '@nestjs/common';
import { int64RangeMessage, parseInt64 } from '../int64';

/** Reads a path parameter as an exact int64 (never through a double). */
@Injectable()
export class ParseInt64Pipe implements PipeTransform<string, bigint> {
  transform(value: string, metadata: ArgumentMetadata): bigint {
    const parsed = parseInt64(value);
    if (parsed === null) {
      throw new BadRequestException(int64RangeMessage(metadata.data ?? 'value'));
    }
    return parsed;
  }
}
