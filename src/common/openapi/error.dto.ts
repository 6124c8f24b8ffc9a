import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { InvalidRequest } from '../validation/validation.errors';

/** The body of every non-2xx response. */
@ApiSchema({ name: 'Error' })
export class ErrorDto {
  @ApiProperty({ type: 'integer', format: 'int32', description: 'The HTTP status code', example: 400 })
  error: number;

  @ApiProperty({ description: 'What went wrong, readable by a person', example: InvalidRequest.doc.example })
  message: string;
}
