import { ApiPropertyOptional, ApiSchema, PickType } from '@nestjs/swagger';
import { CHOSEN_BY_THE_CLIENT, Plant } from '../plant.entity';
import { PLANT_TAG_MAX_LENGTH } from '../plants.limits';

/**
 * The request body of create, the contract's NewPlant: the properties of a plant the client
 * chooses, with their rules (declared on the entity); the service sets any other.
 */
@ApiSchema({ name: 'NewPlant' })
export class CreatePlantDto extends PickType(Plant, CHOSEN_BY_THE_CLIENT) {
  // A request may send null for none, which an answer never holds.
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: `Tag that specifies the type: 1 to ${PLANT_TAG_MAX_LENGTH} characters. Omit it (or send null) for none.`,
  })
  declare tag?: string | null;
}
