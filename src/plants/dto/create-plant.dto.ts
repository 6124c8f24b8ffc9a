import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { IsInt64, IsText } from '../../common/validation/validators';
import { PLANT_NAME_MAX_LENGTH, PLANT_TAG_MAX_LENGTH } from '../plants.limits';

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
    description: `The name of the plant: 1 to ${PLANT_NAME_MAX_LENGTH} characters, not only whitespace`,
    minLength: 1,
    maxLength: PLANT_NAME_MAX_LENGTH,
    example: 'Monstera deliciosa',
  })
  @IsText(1, PLANT_NAME_MAX_LENGTH)
  name: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: `Tag that specifies the type: 1 to ${PLANT_TAG_MAX_LENGTH} characters. Omit it (or send null) for none.`,
    minLength: 1,
    maxLength: PLANT_TAG_MAX_LENGTH,
    example: 'tropical',
  })
  @IsOptional()
  @IsText(1, PLANT_TAG_MAX_LENGTH)
  tag?: string | null;
}
