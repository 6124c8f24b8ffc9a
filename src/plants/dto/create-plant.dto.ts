import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { IsInt64, IsText } from '../../common/validation/validators';

/** The request body of create: the contract's NewPlant. */
@ApiSchema({ name: 'NewPlant' })
export class CreatePlantDto {
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    description:
      'Identification number of the plant, chosen by the client and unique per user. Any signed ' +
      '64-bit integer (-9223372036854775808 to 9223372036854775807), written as a JSON integer; ' +
      'it is kept exactly, also beyond 2^53.',
    example: 7,
  })
  @IsInt64()
  id: bigint;

  @ApiProperty({
    description: 'The name of the plant: 1 to 255 characters, not only whitespace',
    minLength: 1,
    maxLength: 255,
    example: 'Monstera deliciosa',
  })
  @IsText(1, 255)
  name: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'Tag that specifies the type: 1 to 64 characters. Omit it (or send null) for none.',
    minLength: 1,
    maxLength: 64,
    example: 'tropical',
  })
  @IsOptional()
  @IsText(1, 64)
  tag?: string | null;
}
