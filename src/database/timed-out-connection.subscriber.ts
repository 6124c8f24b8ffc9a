import { AfterQueryEvent, EntitySubscriberInterface, EventSubscriber } from 'typeorm';

/**
 * mysql2 answers a statement that outlived its timeout (DB_QUERY_TIMEOUT_MS) with an error but
 * keeps the connection, still waiting for the lost reply, and would queue every later statement
 * behind it forever. Such a connection is destroyed at once; the pool opens a fresh one when the
 * server answers again.
 */
@EventSubscriber()
export class TimedOutConnectionSubscriber implements EntitySubscriberInterface {
  afterQuery(event: AfterQueryEvent): void {
    if (event.success) return;
    const code = (event.error as { driverError?: { code?: unknown }; code?: unknown } | undefined)?.code;
    if (code !== 'PROTOCOL_SEQUENCE_TIMEOUT') return;
    const connection = (event.queryRunner as { databaseConnection?: { destroy?: () => void } }).databaseConnection;
    connection?.destroy?.();
  }
}
