import { Attributes, SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { DataSource } from 'typeorm';
import { PooledStatements } from './pooled-statements';

/** Statements longer than this (migrations) are cut in the span; the ones of a request are short. */
const MAX_STATEMENT_CHARS = 2000;
/** Distinct statements whose span name and attributes are remembered; the service has a few dozen. */
const MAX_NAMES = 500;

const TRACED = Symbol('traced statements');

/**
 * `SELECT plants`, `INSERT plants`: the operation and the first table, as the database conventions
 * name a span. Statements whose shape is not that (`SHOW ...`, `SET ...`) are named by their first
 * word.
 */
export function statementName(sql: string): string {
  const operation = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SQL';
  const table = /\b(?:FROM|INTO|UPDATE|JOIN|TABLE)\s+[`"[]?(\w+)/i.exec(sql)?.[1];
  return table ? `${operation} ${table}` : operation;
}

/** What a statement's span records: the text with its placeholders, never the parameters. */
export function statementAttributes(system: string, namespace: string | undefined, sql: string): Attributes {
  const attributes: Attributes = {
    'db.system.name': system,
    'db.operation.name': statementName(sql).split(' ')[0],
    'db.query.text': sql.length > MAX_STATEMENT_CHARS ? `${sql.slice(0, MAX_STATEMENT_CHARS)}…` : sql,
  };
  if (namespace) attributes['db.namespace'] = namespace;
  return attributes;
}

type Send = (sql: string, ...rest: never[]) => Promise<unknown>;

/**
 * A span for every SQL statement the data source runs within a traced operation (a request), made
 * where a statement is handed to its driver: TypeORM's `QueryRunner.query` (transactions, the
 * health checks, SQLite) and PooledStatements' `run` (autocommit statements on
 * MySQL/MariaDB): one mechanism for both databases. Statements outside a sampled request
 * (migrations at start-up, the webhook poller) make no span.
 *
 * A failed statement's span carries the error's code, not its message: a driver's message can
 * quote the values (`Duplicate entry '…'`).
 *
 * Installed once per class, only when tracing is on: with it off, statements run through the
 * classes' own methods untouched.
 */
export async function traceStatements(dataSource: DataSource): Promise<void> {
  const runner = dataSource.createQueryRunner();
  const prototype = Object.getPrototypeOf(runner) as object;
  await runner.release();

  const system = dataSource.options.type === 'better-sqlite3' ? 'sqlite' : dataSource.options.type;
  const namespace = system === 'sqlite' ? undefined : (dataSource.driver.database ?? undefined);
  const described = new Map<string, { name: string; attributes: Attributes }>();
  const describe = (sql: string) => {
    let statement = described.get(sql);
    if (statement === undefined) {
      statement = { name: statementName(sql), attributes: statementAttributes(system, namespace, sql) };
      if (described.size < MAX_NAMES) described.set(sql, statement);
    }
    return statement;
  };
  traceMethod(prototype as Record<'query', Send>, 'query', describe);
  traceMethod(PooledStatements.prototype as unknown as Record<'run', Send>, 'run', describe);
}

function traceMethod<K extends string>(
  prototype: Record<K, Send> & { [TRACED]?: Set<string> },
  method: K,
  describe: (sql: string) => { name: string; attributes: Attributes },
): void {
  const traced = (prototype[TRACED] ??= new Set());
  if (traced.has(method)) return;
  traced.add(method);
  const tracer = trace.getTracer('plant-store.sql');
  const original = prototype[method];

  const tracedStatement = function (this: unknown, ...args: Parameters<Send>): Promise<unknown> {
    const parent = context.active();
    // A request that is not sampled records nothing below it either.
    if (!trace.getSpan(parent)?.isRecording()) return original.apply(this, args);
    const statement = describe(args[0]);
    const span = tracer.startSpan(statement.name, { kind: SpanKind.CLIENT, attributes: statement.attributes }, parent);
    return context
      .with(trace.setSpan(parent, span), () => original.apply(this, args))
      .then(
        (result: unknown) => {
          span.end();
          return result;
        },
        (error: unknown) => {
          const code =
            (error as { code?: unknown; driverError?: { code?: unknown } })?.driverError?.code ??
            (error as { code?: unknown })?.code;
          span.setAttribute('error.type', typeof code === 'string' ? code : ((error as Error)?.name ?? 'Error'));
          span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
          throw error;
        },
      );
  };
  (prototype as Record<string, Send>)[method] = tracedStatement;
}
