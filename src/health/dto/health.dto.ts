import { ApiProperty, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'Health' })
export class HealthDto {
  @ApiProperty({ enum: ['ok'], example: 'ok' })
  status!: 'ok';

  @ApiProperty({
    description: 'Each checked dependency and its state',
    example: { lifecycle: { status: 'up' }, database: { status: 'up' }, schema: { status: 'up' } },
    type: 'object',
    additionalProperties: { type: 'object', properties: { status: { type: 'string', enum: ['up'] } } },
  })
  info!: Record<string, { status: 'up' }>;
}
