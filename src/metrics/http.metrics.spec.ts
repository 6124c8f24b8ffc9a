import { Registry } from 'prom-client';
import { HttpMetrics } from './http.metrics';
import { MetricsService } from './metrics.service';

describe(HttpMetrics.name, () => {
  let registry: Registry;
  let metrics: HttpMetrics;

  beforeEach(() => {
    registry = new Registry();
    metrics = new HttpMetrics({ registry } as MetricsService);
  });

  it('declares the request histogram on the registry, by method, route template and status', async () => {
    metrics.requestDuration.observe({ method: 'DELETE', route: '/plants/{id}', status: '204' }, 0.003);
    const text = await registry.metrics();
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(text).toContain('http_request_duration_seconds_count{method="DELETE",route="/plants/{id}",status="204"} 1');
    expect(text).toContain(
      'http_request_duration_seconds_bucket{le="0.005",method="DELETE",route="/plants/{id}",status="204"} 1',
    );
  });

  it("counts a request Node's HTTP layer refused as unmatched, answered at once", async () => {
    metrics.countRefusedByHttpLayer(431, 'GET');
    metrics.countRefusedByHttpLayer(400, undefined);
    const text = await registry.metrics();
    expect(text).toContain('http_request_duration_seconds_count{method="GET",route="unmatched",status="431"} 1');
    expect(text).toContain('http_request_duration_seconds_sum{method="unknown",route="unmatched",status="400"} 0');
  });
});
