import { Injectable, NestMiddleware } from '@nestjs/common';
import { NextFunction, Request, Response } from 'express';
import { requestElapsedMs, startRequestClock } from '../common/http/request-clock';
import { routeTemplate } from '../common/http/route-template';
import { HttpMetrics } from './http.metrics';

/** Times every request to the API and counts it under its route template, once it is answered. */
@Injectable()
export class HttpMetricsMiddleware implements NestMiddleware {
  /** One listener for every response, reading the response from `this`: no closure per request. */
  private readonly onFinish: (this: Response) => void;

  constructor(metrics: HttpMetrics) {
    const histogram = metrics.requestDuration;
    this.onFinish = function onFinish(this: Response) {
      this.removeListener('finish', onFinish);
      histogram.observe(
        { method: this.req.method, route: routeTemplate(this.req) ?? 'unmatched', status: String(this.statusCode) },
        requestElapsedMs(this) / 1000,
      );
    };
  }

  use(req: Request, res: Response, next: NextFunction): void {
    startRequestClock(res);
    res.on('finish', this.onFinish);
    next();
  }
}
