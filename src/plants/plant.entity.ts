import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { int64Transformer } from '../common/int64';
import { IsInt64, IsText } from '../common/validation/validators';
import { PLANT_NAME_MAX_LENGTH, PLANT_TAG_MAX_LENGTH } from './plants.limits';

/**
 * A plant, declared once: its table (the columns), and what the API shows of it and accepts (the
 * OpenAPI properties with their examples, the validation). The API's shapes follow from it with
 * @nestjs/swagger's mapped types: the answer (`PlantDto`, every property declared here), the body
 * of a create (`CreatePlantDto`), the `data` of the plant events (src/webhooks/events/events.ts); and from
 * those the OpenAPI document, the client's types and checks, and the examples of the docs.
 * `PlantsRepository` reads and writes every column from this entity's metadata.
 *
 * A plant belongs to the user who created it; ids are chosen by that user, so the key is
 * (owner, id). The owner leads the key: every query is scoped to one owner, and it is the natural
 * shard key on a distributed MySQL-compatible engine. It is the one column the API never shows.
 */
@Entity({ name: 'plants' })
export class Plant {
  @PrimaryColumn({ type: 'varchar', length: 128 })
  owner: string;

  @PrimaryColumn({ type: 'bigint', transformer: int64Transformer })
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

  @Column({ type: 'varchar', length: 255 })
  @ApiProperty({
    description: `The name of the plant: 1 to ${PLANT_NAME_MAX_LENGTH} characters, not only whitespace`,
    minLength: 1,
    maxLength: PLANT_NAME_MAX_LENGTH,
    example: 'Monstera deliciosa',
  })
  @IsText(1, PLANT_NAME_MAX_LENGTH)
  name: string;

  /** NULL in the table; absent, never null, where the API shows the plant. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  @ApiPropertyOptional({
    type: String,
    description: `Tag that specifies the type: 1 to ${PLANT_TAG_MAX_LENGTH} characters; absent when the plant has none`,
    minLength: 1,
    maxLength: PLANT_TAG_MAX_LENGTH,
    example: 'tropical',
  })
  @IsOptional()
  @IsText(1, PLANT_TAG_MAX_LENGTH)
  tag?: string | null;
}

/**
 * The properties a client chooses when it creates a plant (`NewPlant`, `CreatePlantDto`), written
 * with the declaration: a field the client sends is named here, one the service sets is not.
 */
export const CHOSEN_BY_THE_CLIENT = ['id', 'name', 'tag'] as const satisfies readonly (keyof Plant)[];
