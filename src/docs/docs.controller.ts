import { Controller, Get, NotFoundException, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../auth/decorators/public.decorator';
import { DOCS_JSON_PATH, DOCS_PATH, DocsFile, DocsService } from './docs.service';

/** A day: the assets change only with a new release of Swagger UI. */
const ASSET_MAX_AGE_S = 86_400;

/**
 * Swagger UI and the OpenAPI document, served like any other route: request id, log line,
 * metrics, rate limit. Public: reading the API's description needs no token.
 */
@ApiExcludeController()
@Public()
@Controller()
export class DocsController {
  constructor(private readonly docs: DocsService) {}

  @Get(DOCS_JSON_PATH)
  async document(@Res() res: Response): Promise<void> {
    send(res, await this.docs.openApiDocument(), false);
  }

  @Get(DOCS_PATH)
  page(@Res() res: Response): void {
    send(res, this.docs.file(''), false);
  }

  @Get(`${DOCS_PATH}/:file`)
  asset(@Param('file') name: string, @Res() res: Response): void {
    send(res, this.docs.file(name), name !== 'swagger-ui-init.js');
  }
}

function send(res: Response, file: DocsFile | undefined, cacheable: boolean): void {
  if (file === undefined) throw new NotFoundException('No such file in the API documentation');
  res.setHeader('Content-Type', file.type);
  if (cacheable) res.setHeader('Cache-Control', `public, max-age=${ASSET_MAX_AGE_S}`);
  res.end(file.body);
}
