import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { BeforeQueryEvent, EntitySubscriberInterface } from 'typeorm';
import { SubscriptionsRepository } from '../../src/webhooks/subscriptions/subscriptions.repository';
import { TestDatabase } from './databases';
import { TestApp } from './test-app';

/** mysql2 announces every statement it sends on this channel (its tracing channel `mysql2:query`). */
const MYSQL2_QUERY_START = 'tracing:mysql2:query:start';

/**
 * Calls `seen` with every SQL statement the app's data source sends, from whichever path: on
 * MySQL/MariaDB where mysql2 sends it (its diagnostics channel, the statement with its values
 * written in, as the server receives it), which sees autocommit statements sent straight to the
 * pool and those of query runners alike; on SQLite, where every statement goes through a TypeORM
 * query runner, through the data source's query events (the statement and its parameters apart).
 * The app's read of the subscription feed, which it sends every FEED_POLL_MS apart from any request,
 * is not among them. Returns the function that stops watching.
 */
export function watchStatements(
  name: TestDatabase['name'],
  { app, dataSource }: Pick<TestApp, 'app' | 'dataSource'>,
  see: (sql: string, parameters: unknown[]) => void,
): () => void {
  const feedRead = app.get(SubscriptionsRepository).feedRead;
  // Up to its first parameter: mysql2 announces a statement with its values written in.
  const background = feedRead.slice(0, feedRead.indexOf('?'));
  const seen = (sql: string, parameters: unknown[]) => {
    if (!sql.startsWith(background)) see(sql, parameters);
  };
  if (name === 'mysql') {
    const onStart = (message: unknown) => seen((message as { query: string }).query, []);
    subscribe(MYSQL2_QUERY_START, onStart);
    return () => void unsubscribe(MYSQL2_QUERY_START, onStart);
  }
  const counter: EntitySubscriberInterface = {
    beforeQuery: (event: BeforeQueryEvent) =>
      seen(event.query, Array.isArray(event.parameters) ? (event.parameters as unknown[]) : []),
  };
  dataSource.subscribers.push(counter);
  return () => void dataSource.subscribers.splice(dataSource.subscribers.indexOf(counter), 1);
}
