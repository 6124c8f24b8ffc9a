import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { isUniqueViolation } from '../database';
import { AppConfig } from '../config/configuration';
import type { StoreAnswerWithin } from '../idempotency/idempotency.service';
import { CreatePlantDto } from './dto/create-plant.dto';
import { PlantDto } from './dto/plant.dto';
import { PlantsRepository, toPlantDto } from './plants.repository';

export interface PlantPage {
  plants: PlantDto[];
  /** The page size actually applied: the requested limit, capped by PLANTS_MAX_PAGE. */
  limit: number;
  /** Set when more plants follow: the cursor for the next page. */
  nextAfter?: bigint;
}

@Injectable()
export class PlantsService {
  private readonly maxPage: number;

  constructor(
    private readonly plants: PlantsRepository,
    config: ConfigService<AppConfig, true>,
  ) {
    this.maxPage = config.get('plants.maxPage', { infer: true });
  }

  /**
   * The primary key (owner, id) is what refuses a duplicate, so there is no race. With `storeAnswer`
   * (an Idempotency-Key) the answer is stored in the plant's own transaction.
   */
  async create(owner: string, dto: CreatePlantDto, storeAnswer?: StoreAnswerWithin): Promise<PlantDto> {
    const plant = { owner, id: dto.id, name: dto.name, tag: dto.tag };
    try {
      return await (storeAnswer
        ? this.plants.insert(plant, storeAnswer(toPlantDto(plant)))
        : this.plants.insert(plant));
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ConflictException(`A plant with id ${dto.id} already exists`);
      }
      throw error;
    }
  }

  /** Keyset paging on (owner, id): each page is an index range scan, however deep the client reads. */
  async list(owner: string, query: { limit?: number; after?: bigint }): Promise<PlantPage> {
    const limit = Math.min(query.limit ?? this.maxPage, this.maxPage);
    // One row more than the page was asked for: its presence says another page follows.
    const rows = await this.plants.page(owner, limit + 1, query.after);
    const plants = rows.length > limit ? rows.slice(0, limit) : rows;
    const nextAfter = rows.length > limit ? plants[plants.length - 1].id : undefined;
    return { plants, limit, nextAfter };
  }

  /** Scoped to the owner: another user's plant is as absent as a missing one. */
  async remove(owner: string, id: bigint): Promise<void> {
    if (!(await this.plants.delete(owner, id))) throw new NotFoundException(`Plant ${id} not found`);
  }
}
