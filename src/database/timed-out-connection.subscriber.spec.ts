import { AfterQueryEvent } from 'typeorm';
import { TimedOutConnectionSubscriber } from './timed-out-connection.subscriber';

describe(TimedOutConnectionSubscriber.name, () => {
  const subscriber = new TimedOutConnectionSubscriber();
  const eventWith = (success: boolean, error?: unknown) => {
    const destroy = jest.fn();
    const event = { success, error, queryRunner: { databaseConnection: { destroy } } } as unknown as AfterQueryEvent;
    return { event, destroy };
  };

  it('destroys the connection of a statement that timed out', () => {
    const { event, destroy } = eventWith(
      false,
      Object.assign(new Error('Query inactivity timeout'), { code: 'PROTOCOL_SEQUENCE_TIMEOUT' }),
    );
    subscriber.afterQuery(event);
    expect(destroy).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['a successful statement', true, undefined],
    ['a duplicate key', false, Object.assign(new Error('Duplicate entry'), { code: 'ER_DUP_ENTRY' })],
    ['a refused connection', false, Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })],
  ])('keeps the connection after %s', (_label, success, error) => {
    const { event, destroy } = eventWith(success, error);
    subscriber.afterQuery(event);
    expect(destroy).not.toHaveBeenCalled();
  });

  it('copes with a query runner that has no connection (SQLite)', () => {
    const event = {
      success: false,
      error: { code: 'PROTOCOL_SEQUENCE_TIMEOUT' },
      queryRunner: {},
    } as unknown as AfterQueryEvent;
    expect(() => subscriber.afterQuery(event)).not.toThrow();
  });
});
