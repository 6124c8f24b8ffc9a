import { Module } from '@nestjs/common';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { PlantsController } from './plants.controller';
import { PlantsRepository } from './plants.repository';
import { PlantsService } from './plants.service';

@Module({
  // A plant change records its webhook events in its own transaction.
  imports: [WebhooksModule],
  controllers: [PlantsController],
  providers: [PlantsService, PlantsRepository],
})
export class PlantsModule {}
