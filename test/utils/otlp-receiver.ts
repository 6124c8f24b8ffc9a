import { Server, createServer } from 'node:http';
import { AddressInfo } from 'node:net';

/** A span as an OTLP/JSON export carries it, attributes flattened to a record. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's numbering: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  status?: { code?: number };
  resource: Record<string, unknown>;
}

export const SPAN_KIND_SERVER = 2;
export const SPAN_KIND_CLIENT = 3;

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
type OtlpAttributes = Array<{ key: string; value: OtlpValue }> | undefined;

const valueOf = (value: OtlpValue): unknown =>
  value.stringValue ??
  (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
  value.doubleValue ??
  value.boolValue ??
  value.arrayValue?.values?.map(valueOf);

const flatten = (attributes: OtlpAttributes): Record<string, unknown> =>
  Object.fromEntries((attributes ?? []).map(({ key, value }) => [key, valueOf(value)]));

interface ExportTraceServiceRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttributes };
    scopeSpans?: Array<{
      spans?: Array<Omit<ReceivedSpan, 'attributes' | 'resource'> & { attributes?: OtlpAttributes }>;
    }>;
  }>;
}

/**
 * An OTLP/HTTP collector on 127.0.0.1 that takes JSON exports (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`)
 * at /v1/traces and keeps every span, as a tracing backend would receive them.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Raw bodies, to look for what must never be exported anywhere in them. */
  readonly bodies: string[] = [];
  private server?: Server;

  get endpoint(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (req.method !== 'POST' || req.url !== '/v1/traces' || !/json/.test(req.headers['content-type'] ?? '')) {
          res.writeHead(404).end();
          return;
        }
        this.bodies.push(body);
        const request = JSON.parse(body) as ExportTraceServiceRequest;
        for (const resourceSpans of request.resourceSpans ?? []) {
          const resource = flatten(resourceSpans.resource?.attributes);
          for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
            for (const span of scopeSpans.spans ?? []) {
              this.spans.push({ ...span, attributes: flatten(span.attributes), resource });
            }
          }
        }
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  inTrace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
