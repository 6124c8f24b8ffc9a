import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

/** A plant as the API returns it. `tag` is absent, never null, when the plant has none. */
@ApiSchema({ name: 'Plant' })
export class PlantDto {
  @ApiProperty({ type: 'integer', format: 'int64', description: 'Identification number of the plant', example: 7 })
  id: bigint;

  @ApiProperty({ description: 'The name of the plant', example: 'Monstera deliciosa' })
  name: string;

  @ApiPropertyOptional({ description: 'Tag that specifies the type', example: 'tropical' })
  tag?: string;
}
