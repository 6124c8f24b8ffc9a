import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { isUniqueViolation } from '../database';
import { AppConfig } from '../config/configuration';
import { CreatePlantDto } from './dto/create-plant.dto';
import { PlantDto, toPlantDto } from './dto/plant.dto';
import { EventOutbox } from '../webhooks/events/event-outbox.service';
import { PlantAlreadyExists, PlantNotFound } from './plants.errors';
import { PlantsRepository } from './plants.repository';

export interface PlantPage {
  plants: PlantDto[];
  /** The page size actually applied: the requested limit (else PLANTS_DEFAULT_PAGE), capped by PLANTS_MAX_PAGE. */
  limit: number;
  /** Set when more plants follow: the cursor for the next page. */
  nextAfter?: bigint;
}

@Injectable()
export class PlantsService {
  private readonly maxPage: number;
  private readonly defaultPage: number;

  constructor(
    private readonly plants: PlantsRepository,
    private readonly events: EventOutbox,
    config: ConfigService<AppConfig, true>,
  ) {
    this.maxPage = config.get('plants.maxPage', { infer: true });
    this.defaultPage = config.get('plants.defaultPage', { infer: true });
  }

  /**
   * The primary key (owner, id) is what refuses a duplicate, so there is no race. The webhook
   * events of the change are recorded with it (EventOutbox).
   */
  async create(owner: string, dto: CreatePlantDto): Promise<PlantDto> {
    // The row and the answer are whole before the INSERT: no read after it.
    const row = this.plants.newRow(owner, dto);
    const plant = toPlantDto(row);
    try {
      await this.events.change('created', owner, plant, (onlyIf) => this.plants.insert(row, onlyIf));
      return plant;
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new PlantAlreadyExists(dto.id);
      }
      throw error;
    }
  }

  /** Keyset paging on (owner, id): each page is an index range scan, however deep the client reads. */
  async list(owner: string, query: { limit?: number; after?: bigint }): Promise<PlantPage> {
    const limit = Math.min(query.limit ?? this.defaultPage, this.maxPage);
    // One row more than the page was asked for: its presence says another page follows.
    const rows = await this.plants.page(owner, limit + 1, query.after);
    const plants = rows.length > limit ? rows.slice(0, limit) : rows;
    const nextAfter = rows.length > limit ? plants[plants.length - 1].id : undefined;
    return { plants, limit, nextAfter };
  }

  /** Scoped to the owner: another user's plant is as absent as a missing one. */
  async remove(owner: string, id: bigint): Promise<void> {
    const deleted = await this.events.change('deleted', owner, { id }, (onlyIf) =>
      this.plants.delete(owner, id, onlyIf),
    );
    if (!deleted) throw new PlantNotFound(id);
  }
}
