import { Injectable, NestMiddleware } from '@nestjs/common';
import { NextFunction, Request, Response } from 'express';
import { performance } from 'node:perf_hooks';
import { routeTemplate } from '../common/http/route-template';
import { MetricsService } from './metrics.service';

const STARTED_AT = Symbol('metricsStartedAt');

type TimedResponse = Response & { [STARTED_AT]?: number };

/** Times every request to the API and counts it under its route template, once it is answered. */
@Injectable()
export class HttpMetricsMiddleware implements NestMiddleware {
  /** One listener for every response, reading the response from `this`: no closure per request. */
  private readonly onFinish: (this: TimedResponse) => void;

  constructor(metrics: MetricsService) {
    const histogram = metrics.requestDuration;
    this.onFinish = function onFinish(this: TimedResponse) {
      const startedAt = this[STARTED_AT];
      if (startedAt === undefined) return;
      this[STARTED_AT] = undefined;
      histogram.observe(
        { method: this.req.method, route: routeTemplate(this.req) ?? 'unmatched', status: String(this.statusCode) },
        (performance.now() - startedAt) / 1000,
      );
    };
  }

  use(req: Request, res: Response, next: NextFunction): void {
    (res as TimedResponse)[STARTED_AT] = performance.now();
    res.on('finish', this.onFinish);
    next();
  }
}
