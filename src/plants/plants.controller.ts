import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentPrincipal } from '../auth/decorators/current-principal.decorator';
import { RequireScopes } from '../auth/decorators/require-scopes.decorator';
import { Principal } from '../auth/principal';
import { TakesJsonBody } from '../common/json/json-body.guard';
import { ApiErrors } from '../common/openapi/api-errors.decorator';
import { ParseInt64Pipe } from '../common/validation/parse-int64.pipe';
import { runIdempotent } from '../idempotency/idempotent-call';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { Idempotent, REPLAYED_RESPONSE_HEADERS } from '../idempotency/idempotent.decorator';
import { CreatePlantDto } from './dto/create-plant.dto';
import { ListPlantsQueryDto } from './dto/list-plants-query.dto';
import { PlantDto } from './dto/plant.dto';
import { PlantsService } from './plants.service';

@ApiTags('plants')
@ApiBearerAuth('bearer')
@ApiErrors(401, 403, 429, 500, 503)
@Controller('plants')
export class PlantsController {
  constructor(
    private readonly plants: PlantsService,
    private readonly idempotency: IdempotencyService,
  ) {}

  @Post()
  @HttpCode(200)
  @RequireScopes('plants:write')
  @ApiOperation({
    operationId: 'createPlant',
    summary: 'Create a plant',
    description:
      'Creates a new plant in the store. Safe to retry with an `Idempotency-Key`. Needs the scope plants:write.',
  })
  @ApiOkResponse({ type: PlantDto, description: 'The plant as stored', headers: REPLAYED_RESPONSE_HEADERS })
  @ApiErrors(400)
  @Idempotent({
    description: 'This user already has a plant with this id; the existing plant is unchanged',
    example: 'A plant with id 42 already exists',
  })
  @TakesJsonBody()
  create(@CurrentPrincipal() caller: Principal, @Body() dto: CreatePlantDto, @Req() req: Request): Promise<PlantDto> {
    return runIdempotent(this.idempotency, req, { successStatus: 200 }, () => this.plants.create(caller.subject, dto));
  }

  @Get()
  @RequireScopes('plants:read')
  @ApiOperation({
    operationId: 'listPlants',
    summary: 'List plants',
    description:
      'Returns the plants of the calling user, ordered by id ascending, one page at a time. ' +
      'When more remain, the `Link` header carries the next page. Needs the scope plants:read.',
  })
  @ApiOkResponse({
    type: PlantDto,
    isArray: true,
    description: 'One page of plants',
    headers: {
      Link: {
        description: 'Present when more plants remain: `</plants?limit=N&after=ID>; rel="next"` (RFC 8288)',
        schema: { type: 'string' },
      },
    },
  })
  @ApiErrors(400)
  async list(
    @CurrentPrincipal() caller: Principal,
    @Query() query: ListPlantsQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<PlantDto[]> {
    const page = await this.plants.list(caller.subject, query);
    if (page.nextAfter !== undefined) {
      res.setHeader('Link', `</plants?limit=${page.limit}&after=${page.nextAfter}>; rel="next"`);
    }
    return page.plants;
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('plants:write')
  @ApiOperation({
    operationId: 'deletePlant',
    summary: 'Delete a plant',
    description: 'Deletes a single plant of the calling user by id. Needs the scope plants:write.',
  })
  @ApiParam({ name: 'id', type: 'integer', format: 'int64', description: 'ID of the plant to delete' })
  @ApiNoContentResponse({ description: 'Plant deleted' })
  @ApiErrors(400, 404)
  remove(@CurrentPrincipal() caller: Principal, @Param('id', ParseInt64Pipe) id: bigint): Promise<void> {
    return this.plants.remove(caller.subject, id);
  }
}
