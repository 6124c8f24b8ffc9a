import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectRepository } from '@nestjs/typeorm';
import { MoreThan, Repository } from 'typeorm';
import { AppConfig } from '../config/configuration';
import { isUniqueViolation } from '../database/database-errors';
import { CreatePlantDto } from './dto/create-plant.dto';
import { PlantDto } from './dto/plant.dto';
import { Plant } from './plant.entity';

export interface PlantPage {
  plants: PlantDto[];
  /** The page size actually applied: the requested limit, capped by PLANTS_MAX_PAGE. */
  limit: number;
  /** Set when more plants follow: the cursor for the next page. */
  nextAfter?: bigint;
}

export function toPlantDto(plant: Pick<Plant, 'id' | 'name' | 'tag'>): PlantDto {
  return plant.tag === null || plant.tag === undefined
    ? { id: plant.id, name: plant.name }
    : { id: plant.id, name: plant.name, tag: plant.tag };
}

@Injectable()
export class PlantsService {
  private readonly maxPage: number;

  constructor(
    @InjectRepository(Plant) private readonly plants: Repository<Plant>,
    config: ConfigService<AppConfig, true>,
  ) {
    this.maxPage = config.get('plants.maxPage', { infer: true });
  }

  /** One INSERT; the primary key (owner, id) is what refuses a duplicate, so there is no race. */
  async create(owner: string, dto: CreatePlantDto): Promise<PlantDto> {
    const plant = { owner, id: dto.id, name: dto.name, tag: dto.tag ?? null };
    try {
      await this.plants.insert(plant);
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ConflictException(`A plant with id ${dto.id} already exists`);
      }
      throw error;
    }
    return toPlantDto(plant);
  }

  /** Keyset paging on (owner, id): each page is an index range scan, however deep the client reads. */
  async list(owner: string, query: { limit?: number; after?: bigint }): Promise<PlantPage> {
    const limit = Math.min(query.limit ?? this.maxPage, this.maxPage);
    const rows = await this.plants.find({
      where: query.after === undefined ? { owner } : { owner, id: MoreThan(query.after) },
      order: { id: 'ASC' },
      take: limit + 1,
    });
    const page = rows.slice(0, limit);
    const nextAfter = rows.length > limit ? page[page.length - 1].id : undefined;
    return { plants: page.map(toPlantDto), limit, nextAfter };
  }

  /** One DELETE scoped to the owner: another user's plant is as absent as a missing one. */
  async remove(owner: string, id: bigint): Promise<void> {
    const result = await this.plants.delete({ owner, id });
    if (!result.affected) throw new NotFoundException(`Plant ${id} not found`);
  }
}
