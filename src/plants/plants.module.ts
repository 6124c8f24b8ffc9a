import { Module } from '@nestjs/common';
import { PlantsController } from './plants.controller';
import { PlantsRepository } from './plants.repository';
import { PlantsService } from './plants.service';

@Module({
  controllers: [PlantsController],
  providers: [PlantsService, PlantsRepository],
})
export class PlantsModule {}
