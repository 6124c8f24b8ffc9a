import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { DataSource } from 'typeorm';
import { statementAttributes, statementName, traceStatements } from './traced-statements';

describe(statementName.name, () => {
  it.each([
    ['SELECT id, name, tag FROM plants WHERE owner = ? ORDER BY id LIMIT ?', 'SELECT plants'],
    ['INSERT INTO `plants`(`owner`, `id`) VALUES (?, ?)', 'INSERT plants'],
    ['UPDATE "api_tokens" SET "last_used_at" = ? WHERE "id" = ?', 'UPDATE api_tokens'],
    ['DELETE FROM plants WHERE owner = ? AND id = ?', 'DELETE plants'],
    ['  select 1', 'SELECT'],
    ["SHOW VARIABLES LIKE 'wsrep_sync_wait'", 'SHOW'],
  ])('%s', (sql, name) => {
    expect(statementName(sql)).toBe(name);
  });
});

describe(statementAttributes.name, () => {
  it('records the statement text, cut when long, and the database when known', () => {
    const long = `SELECT ${'x, '.repeat(1500)}1`;
    const attributes = statementAttributes('mariadb', 'plantstore', long);
    expect(attributes).toMatchObject({
      'db.system.name': 'mariadb',
      'db.operation.name': 'SELECT',
      'db.namespace': 'plantstore',
    });
    expect(String(attributes['db.query.text'])).toHaveLength(2001);
    expect(statementAttributes('sqlite', undefined, 'SELECT 1')).not.toHaveProperty('db.namespace');
  });
});

describe(traceStatements.name, () => {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const contextManager = new AsyncLocalStorageContextManager();
  let dataSource: DataSource;

  beforeAll(async () => {
    context.setGlobalContextManager(contextManager.enable());
    trace.setGlobalTracerProvider(provider);
    dataSource = await new DataSource({ type: 'better-sqlite3', database: ':memory:' }).initialize();
    await dataSource.query('CREATE TABLE plants (owner TEXT, id INTEGER, name TEXT)');
    await traceStatements(dataSource);
    // A second data source of the same driver must not wrap the statements twice.
    await traceStatements(dataSource);
  });
  afterAll(async () => {
    await dataSource.destroy();
    await provider.shutdown();
    trace.disable();
    context.disable();
  });
  beforeEach(() => exporter.reset());

  const inRequest = <T>(work: () => Promise<T>) =>
    trace.getTracer('test').startActiveSpan('GET /plants', async (span) => {
      try {
        return await work();
      } finally {
        span.end();
      }
    });

  it('makes a span per statement under the active span, with placeholders and never the parameters', async () => {
    await inRequest(async () => {
      await dataSource.query('INSERT INTO plants (owner, id, name) VALUES (?, ?, ?)', ['secret-owner', 42, 'Fern']);
      await dataSource.query('SELECT name FROM plants WHERE owner = ?', ['secret-owner']);
    });
    const spans = exporter.getFinishedSpans();
    const server = spans.find((span) => span.name === 'GET /plants')!;
    const statements = spans.filter((span) => span !== server);
    expect(statements.map((span) => span.name)).toEqual(['INSERT plants', 'SELECT plants']);
    for (const span of statements) {
      expect(span.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
      expect(span.attributes['db.system.name']).toBe('sqlite');
    }
    expect(statements[0].attributes['db.query.text']).toBe('INSERT INTO plants (owner, id, name) VALUES (?, ?, ?)');
    expect(JSON.stringify(statements.map((span) => span.attributes))).not.toMatch(/secret-owner|Fern|42/);
  });

  it('marks a failed statement with its error code, not its message', async () => {
    await expect(
      inRequest(() => dataSource.query('SELECT nothing FROM missing_table WHERE x = ?', ['secret'])),
    ).rejects.toThrow();
    const failed = exporter.getFinishedSpans().find((span) => span.name === 'SELECT missing_table')!;
    expect(failed.status.code).toBe(2);
    expect(failed.attributes['error.type']).toBe('SQLITE_ERROR');
    expect(JSON.stringify(failed.attributes)).not.toContain('secret');
  });

  it('makes no span for a statement outside a trace (start-up, background work)', async () => {
    await dataSource.query('SELECT 1');
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('makes no span under a request that is not sampled', async () => {
    const unsampled = trace.wrapSpanContext({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 0 });
    await context.with(trace.setSpan(context.active(), unsampled), () => dataSource.query('SELECT 1'));
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
