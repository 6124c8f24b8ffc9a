import { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter, NestExpressApplication } from '@nestjs/platform-express';
import { Server } from 'node:http';
import { ServiceExpressAdapter } from '../common/http/express-adapter';
import { answerHttpLayerErrors } from '../common/http/http-layer-errors';
import { AppConfig } from '../config/configuration';
import { HttpMetrics } from '../metrics/http.metrics';
import { withServerSpans } from '../tracing/tracing';

export const APP_OPTIONS: NestApplicationOptions = {
  // Bodies are read after the guards, by the routes that take one (TakesJsonBody), keeping int64 exact.
  bodyParser: false,
};

export function createHttpAdapter(): ExpressAdapter {
  return new ServiceExpressAdapter(withServerSpans);
}

/** What the HTTP server answers before Express: malformed requests, counted; and who the client is. */
export function setUpHttpServer(app: NestExpressApplication, http: AppConfig['http']): void {
  const metrics = app.get(HttpMetrics);
  answerHttpLayerErrors(app.getHttpServer() as Server, (status, method) =>
    metrics.countRefusedByHttpLayer(status, method),
  );
  app.disable('x-powered-by');
  // Client addresses (rate limits, logs) come from X-Forwarded-For only through the proxies listed here.
  app.set('trust proxy', http.trustProxy);
}
