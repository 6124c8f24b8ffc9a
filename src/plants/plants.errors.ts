import { ConflictException, NotFoundException } from '@nestjs/common';
import { errorDoc } from '../common/openapi/error-doc';

export class PlantAlreadyExists extends ConflictException {
  static readonly doc = errorDoc(
    new PlantAlreadyExists(42n),
    'This user already has a plant with this id; the existing plant is unchanged',
  );

  constructor(id: bigint) {
    super(`A plant with id ${id} already exists`);
  }
}

/** Also the answer for another user's plant: ids cannot be probed. */
export class PlantNotFound extends NotFoundException {
  static readonly doc = errorDoc(
    new PlantNotFound(42n),
    'No such plant for this user (a plant of another user is not told apart from a missing one)',
  );

  constructor(id: bigint) {
    super(`Plant ${id} not found`);
  }
}
