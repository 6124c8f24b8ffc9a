import { ApiSchema, OmitType } from '@nestjs/swagger';
import { viewAs } from '../../common/openapi/declared-properties';
import { Plant } from '../plant.entity';

/**
 * A plant as the API returns it: every property the entity declares for the API, which is all of
 * its columns but the owner.
 */
@ApiSchema({ name: 'Plant' })
export class PlantDto extends OmitType(Plant, ['owner'] as const) {}

/** A plant (a row with its owner, say) as the API shows it: PlantDto's properties, a NULL one (`tag`) left out. */
export const toPlantDto = viewAs(PlantDto);
