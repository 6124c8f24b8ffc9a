import { Injectable, NestMiddleware } from '@nestjs/common';
import { NextFunction, Request, Response } from 'express';
import { routeTemplate } from '../common/http/route-template';
import { MetricsService } from './metrics.service';

/** Times every request to the API and counts it under its route template, once it is answered. */
@Injectable()
export class HttpMetricsMiddleware implements NestMiddleware {
  constructor(private readonly metrics: MetricsService) {}

  use(req: Request, res: Response, next: NextFunction): void {
    const stop = this.metrics.requestDuration.startTimer();
    res.once('finish', () => {
      stop({ method: req.method, route: routeTemplate(req) ?? 'unmatched', status: String(res.statusCode) });
    });
    next();
  }
}
