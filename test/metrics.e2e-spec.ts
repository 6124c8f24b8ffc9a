import { request as httpRequest } from 'node:http';
import { MetricsService } from '../src/metrics/metrics.service';
import { testDatabases } from './utils/databases';
import { listenOnLoopback, rawRequest, rawSocketExchange } from './utils/raw-http';
import { TestApp, bearer, expectErrorBody, startTestApp } from './utils/test-app';

/** A GET to the metrics listener, which is not the API's server (so not through supertest's app). */
function scrape(port: number, path = '/metrics'): Promise<{ status: number; type?: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'GET', agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          type: res.headers['content-type'],
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** The value of one sample line, e.g. `name{a="b"} 3`, or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe.each(testDatabases())('Prometheus metrics on %s', (database) => {
  let t: TestApp;
  let port: number;
  let token: string;

  beforeAll(async () => {
    t = await startTestApp(database, { METRICS_PORT: '0' });
    await t.reset();
    token = await t.token({ subject: 'metrics' });
    port = t.app.get(MetricsService).port as number;
  });
  afterAll(() => t.close());

  it('listens on a port of its own, picked freely with METRICS_PORT=0', () => {
    expect(port).toEqual(expect.any(Number));
    expect(port).toBeGreaterThan(0);
  });

  it('counts requests by method, route template and status, never by raw path', async () => {
    const created = await t
      .http()
      .post('/plants')
      .set(bearer(token))
      .set('Content-Type', 'application/json')
      .send('{"id":123,"name":"Counted"}');
    expect(created.status).toBe(200);
    expect((await t.http().get('/plants?limit=5').set(bearer(token))).status).toBe(200);
    expect((await t.http().delete('/plants/123').set(bearer(token))).status).toBe(204);
    expect((await t.http().delete('/plants/123').set(bearer(token))).status).toBe(404);
    expect((await t.http().get('/no/such/path/4567').set(bearer(token))).status).toBe(404);

    const res = await scrape(port);
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^text\/plain; version=0\.0\.4/);
    const { text } = res;
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(
      sample(text, 'http_request_duration_seconds_count{method="POST",route="/plants",status="200"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, 'http_request_duration_seconds_count{method="GET",route="/plants",status="200"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'http_request_duration_seconds_count{method="DELETE",route="/plants/{id}",status="204"}')).toBe(
      1,
    );
    expect(sample(text, 'http_request_duration_seconds_count{method="DELETE",route="/plants/{id}",status="404"}')).toBe(
      1,
    );
    expect(
      sample(text, 'http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain('/plants/123');
    // Ids are looked for in labels only: the values of other metrics may hold any digits.
    const labelValues = [...text.matchAll(/="([^"]*)"/g)].map((m) => m[1]);
    expect(labelValues.filter((value) => /123|4567/.test(value))).toEqual([]);
    expect(text).not.toContain('/no/such');
    expect(text).not.toContain('limit=5');
  });

  it('counts each request once, when it is answered', async () => {
    const series = 'http_request_duration_seconds_count{method="GET",route="/plants",status="401"}';
    const before = sample((await scrape(port)).text, series) ?? 0;
    await t.http().get('/plants');
    await t.http().get('/plants');
    expect(sample((await scrape(port)).text, series)).toBe(before + 2);
  });

  it("counts requests Node's HTTP layer refuses (malformed, headers too large, unknown Expect) as unmatched", async () => {
    const apiPort = await listenOnLoopback(t.app);
    const series = {
      malformed: 'http_request_duration_seconds_count{method="unknown",route="unmatched",status="400"}',
      tooLarge: 'http_request_duration_seconds_count{method="unknown",route="unmatched",status="431"}',
      expectation: 'http_request_duration_seconds_count{method="POST",route="unmatched",status="417"}',
    };
    const before = (await scrape(port)).text;
    expect(
      (await rawSocketExchange(apiPort, Buffer.from('GET /\u0000 HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1'))).status,
    ).toBe(400);
    expect((await rawRequest(apiPort, { path: '/plants', headers: { 'X-Padding': 'a'.repeat(20_000) } })).status).toBe(
      431,
    );
    const expectation = await rawRequest(apiPort, {
      method: 'POST',
      path: '/plants',
      headers: { Expect: 'teapot', 'Content-Length': '0' },
    });
    expect(expectation.status).toBe(417);
    const after = (await scrape(port)).text;
    for (const name of Object.values(series))
      expect({ name, count: sample(after, name) }).toEqual({ name, count: (sample(before, name) ?? 0) + 1 });
  });

  it('serves the default process and Node.js metrics', async () => {
    const { text } = await scrape(port);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
  });

  if (database === 'mysql') {
    it('reports the MySQL connection pool', async () => {
      await t.http().get('/plants').set(bearer(token));
      const { text } = await scrape(port);
      expect(sample(text, 'db_pool_connections{state="max"}')).toBeGreaterThan(0);
      expect(sample(text, 'db_pool_connections{state="in_use"}')).toBeGreaterThanOrEqual(0);
      expect(sample(text, 'db_pool_connections{state="idle"}')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'db_pool_waiting_requests')).toBe(0);
    });
  } else {
    it('reports no connection pool on SQLite', async () => {
      const { text } = await scrape(port);
      expect(text.split('\n').filter((line) => line.startsWith('db_pool_'))).toEqual([]);
    });
  }

  it('answers other paths of the metrics listener with 404', async () => {
    expect((await scrape(port, '/')).status).toBe(404);
    expect((await scrape(port, '/plants')).status).toBe(404);
  });

  it('is not served on the API port: /metrics there is a 404 Error', async () => {
    const res = await t.http().get('/metrics');
    expectErrorBody(res, 404);
    expect(res.text).not.toContain('http_request_duration_seconds');
    expectErrorBody(await t.http().get('/metrics').set(bearer(token)), 404);
  });

  it('stops listening when the app closes', async () => {
    const other = await startTestApp(database, { METRICS_PORT: '0' });
    const otherPort = other.app.get(MetricsService).port as number;
    expect(otherPort).not.toBe(port);
    expect((await scrape(otherPort)).status).toBe(200);
    await other.close();
    await expect(scrape(otherPort)).rejects.toThrow(/ECONNREFUSED/);
  });
});
