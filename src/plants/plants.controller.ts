import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentPrincipal } from '../auth/decorators/current-principal.decorator';
import { RequireScopes } from '../auth/decorators/require-scopes.decorator';
import { Principal } from '../auth/principal';
import { ApiErrors } from '../common/openapi/api-errors.decorator';
import { ParseInt64Pipe } from '../common/validation/parse-int64.pipe';
import { InvalidRequest } from '../common/validation/validation.errors';
import { TakesJsonBody } from '../common/json/json-body.guard';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { CreatePlantDto } from './dto/create-plant.dto';
import { ListPlantsQueryDto } from './dto/list-plants-query.dto';
import { PlantDto } from './dto/plant.dto';
import { PlantAlreadyExists, PlantNotFound } from './plants.errors';
import { PlantsService } from './plants.service';

@ApiTags('plants')
@ApiBearerAuth('bearer')
@Controller('plants')
export class PlantsController {
  constructor(private readonly plants: PlantsService) {}

  @Post()
  @RequireScopes('plants:write')
  @ApiOperation({
    operationId: 'createPlant',
    summary: 'Create a plant',
    description: 'Creates a new plant in the store. Safe to retry with an `Idempotency-Key`.',
  })
  // 200 rather than 201, as the contract says.
  @HttpCode(200)
  @ApiOkResponse({ type: PlantDto, description: 'The plant as stored' })
  @ApiErrors(InvalidRequest.doc)
  @Idempotent({ conflict: PlantAlreadyExists.doc })
  @TakesJsonBody()
  create(@CurrentPrincipal() caller: Principal, @Body() dto: CreatePlantDto): Promise<PlantDto> {
    return this.plants.create(caller.subject, dto);
  }

  @Get()
  @RequireScopes('plants:read')
  @ApiOperation({
    operationId: 'listPlants',
    summary: 'List plants',
    description:
      'Returns the plants of the calling user, ordered by id ascending, one page at a time. ' +
      'When more remain, the `Link` header carries the next page.',
  })
  @ApiOkResponse({
    type: PlantDto,
    isArray: true,
    description: 'One page of plants',
    headers: {
      Link: {
        description:
          'Present when more plants remain: `<?limit=N&after=ID>; rel="next"` (RFC 8288). The target is a ' +
          'relative reference holding only a query: resolved against the URL of this request (RFC 3986 §5), it ' +
          'is the same path with the query of the next page, so it stays under any path prefix a gateway serves ' +
          'the API at.',
        schema: { type: 'string' },
      },
    },
  })
  @ApiErrors(InvalidRequest.doc)
  async list(
    @CurrentPrincipal() caller: Principal,
    @Query() query: ListPlantsQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<PlantDto[]> {
    const page = await this.plants.list(caller.subject, query);
    if (page.nextAfter !== undefined) {
      // Query only: the client resolves it against the URL it used, prefix and trailing slash
      // included, so a gateway that serves the API under /some-prefix gets page 2 too.
      res.setHeader('Link', `<?limit=${page.limit}&after=${page.nextAfter}>; rel="next"`);
    }
    return page.plants;
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('plants:write')
  @ApiOperation({
    operationId: 'deletePlant',
    summary: 'Delete a plant',
    description: 'Deletes a single plant of the calling user by id.',
  })
  @ApiParam({ name: 'id', type: 'integer', format: 'int64', description: 'ID of the plant to delete' })
  @ApiNoContentResponse({ description: 'Plant deleted' })
  @ApiErrors(InvalidRequest.doc, PlantNotFound.doc)
  @Idempotent()
  remove(@CurrentPrincipal() caller: Principal, @Param('id', ParseInt64Pipe) id: bigint): Promise<void> {
    return this.plants.remove(caller.subject, id);
  }
}
