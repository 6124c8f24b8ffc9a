import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/decorators/public.decorator';
import { ErrorDto } from '../common/openapi/error.dto';
import { HealthDto } from './dto/health.dto';
import { HealthService } from './health.service';

/** Declared, not left out: an operation without `security` would inherit any top-level requirement. */
const NO_TOKEN: [] = [];

/** Probes for load balancers and orchestrators: public, never rate limited, cheap. */
@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get('live')
  @ApiOperation({
    operationId: 'live',
    summary: 'Liveness',
    description: 'The process is up and answering.',
    security: NO_TOKEN,
  })
  @ApiOkResponse({ type: HealthDto, description: 'Alive' })
  live(): Promise<HealthDto> {
    return this.health.live();
  }

  @Get('ready')
  @ApiOperation({
    operationId: 'ready',
    summary: 'Readiness',
    description:
      'The instance can serve: its database answers, the tables and columns it uses are there, and it is not shutting down.',
    security: NO_TOKEN,
  })
  @ApiOkResponse({ type: HealthDto, description: 'Ready for traffic' })
  @ApiServiceUnavailableResponse({ type: ErrorDto, description: 'Not ready: the message names what is down' })
  ready(): Promise<HealthDto> {
    return this.health.ready();
  }
}
