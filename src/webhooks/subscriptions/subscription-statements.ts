import { EntityTable } from '../../database';
import { WebhookSubscription } from './webhook-subscription.entity';

/**
 * A subscription as a path names it: by the id the API shows (`publicId`), or by the row's key
 * (`id`), which a subscription made before public ids was shown by and which a client may still
 * hold. Either way one subscription: a key within MAX_SUBSCRIPTION_ID is also its row's public id,
 * and a key above it is no public id (save one chance in 2^53 that an id drawn for one subscription
 * equals the key of another that the previous release made during an upgrade).
 */
const byPathId = (alias = '') => `${alias}owner = :owner AND (${alias}publicId = :id OR ${alias}id = :id)`;
const BY_PATH_ID_PARAMETERS = ['owner', 'id', 'id'];

/** What the API shows of a subscription as it is stored. */
const STORED = ['publicId', 'url', 'events', 'description', 'createdAt', 'disabledAt', 'disabledReason'] as const;
/** What the API shows of a subscription: STORED, and the previous secret's expiry while it signs. */
export const SHOWN = [...STORED, 'previousSecretExpiresAt'] as const;
/** What a new subscription is given; every other column starts NULL. */
const INSERTED = [
  'id',
  'publicId',
  'owner',
  'url',
  'events',
  'description',
  'secret',
  'createdAt',
  'feedVersion',
] as const;

/** A column set to NULL by an UPDATE. */
export const NULL = () => 'NULL';

/**
 * Every statement of SubscriptionsRepository but a PATCH's, made from the WebhookSubscription entity
 * with TypeORM's query builder when the repository is made, at start-up. `now` is the database's
 * clock (NOW_MS).
 */
export function compileSubscriptionStatements(table: EntityTable<WebhookSubscription>, now: string) {
  const compile = table.compile.bind(table);
  /** The previous secret (or its expiry) only while it still signs. */
  const whileItSigns = (property: string) => `CASE WHEN s.previousSecretExpiresAt > ${now} THEN s.${property} END`;
  const shown = () =>
    table.select('s', STORED).addSelect(whileItSigns('previousSecretExpiresAt'), 'previousSecretExpiresAt');
  const rotate = (keep: Record<string, () => string>, parameters: string[]) =>
    compile(
      // MySQL assigns left to right: the previous secret is read before `secret` is replaced.
      table
        .update()
        .set({ ...keep, secret: () => ':secret' })
        .where(byPathId()),
      [...parameters, 'secret', ...BY_PATH_ID_PARAMETERS],
    );
  const secretsAfter = (property: 'secret' | 'previousSecret', whileSigning: string) =>
    `${compile(
      table
        .select('s', ['id', property])
        .where(`s.id > :after${whileSigning} AND s.${property} NOT LIKE :prefix`)
        .orderBy('s.id'),
      ['after', 'prefix'],
    )} LIMIT ?`;
  // The owner's count and the insert in one statement; the query builder makes no INSERT ... SELECT.
  const insert =
    `INSERT INTO ${table.name} (${table.columnList(INSERTED)}) SELECT ${INSERTED.map(() => '?').join(', ')} ` +
    `FROM (SELECT COUNT(*) AS n FROM ${table.name} WHERE ${table.column('owner')} = ?) existing WHERE existing.n < ?`;
  return {
    insert,
    list: compile(shown().where('s.owner = :owner').orderBy('s.publicId'), ['owner']),
    get: compile(shown().where(byPathId('s.')), BY_PATH_ID_PARAMETERS),
    state: compile(table.select('s', ['id', 'disabledAt']).where(byPathId('s.')), BY_PATH_ID_PARAMETERS),
    readState: table.reader(['id', 'disabledAt']),
    sendingTarget: compile(
      table
        .select('s', ['id', 'publicId', 'url', 'secret'])
        .addSelect(whileItSigns('previousSecret'), 'previousSecret')
        .where(byPathId('s.')),
      BY_PATH_ID_PARAMETERS,
    ),
    readTarget: table.reader(['id', 'publicId', 'url', 'secret', 'previousSecret']),
    rotateKeeping: rotate({ previousSecret: () => 'secret', previousSecretExpiresAt: () => `${now} + :grace` }, [
      'grace',
    ]),
    rotate: rotate({ previousSecret: NULL, previousSecretExpiresAt: NULL }, []),
    takeTestLease: compile(
      table
        .update()
        .set({ testingUntil: () => `${now} + :lease` })
        .where(`id = :key AND (testingUntil IS NULL OR testingUntil <= ${now})`),
      ['lease', 'key'],
    ),
    testLease: compile(table.select('s', ['testingUntil']).where('s.id = :key'), ['key']),
    endTestLease: compile(table.update().set({ testingUntil: NULL }).where('id = :key AND testingUntil = :until'), [
      'key',
      'until',
    ]),
    delete: compile(table.delete().where('owner = :owner AND id = :key'), ['owner', 'key']),
    secrets: secretsAfter('secret', ''),
    previousSecrets: secretsAfter('previousSecret', ` AND s.previousSecretExpiresAt > ${now}`),
    readSecret: table.reader(['id']),
    replaceSecret: compile(
      table
        .update()
        .set({ secret: () => ':secret' })
        .where('id = :key AND secret = :previous'),
      ['secret', 'key', 'previous'],
    ),
    replacePreviousSecret: compile(
      table
        .update()
        .set({ previousSecret: () => ':secret' })
        .where('id = :key AND previousSecret = :previous'),
      ['secret', 'key', 'previous'],
    ),
    count: compile(table.select('s', []).addSelect('COUNT(*)', 'n').addSelect('COUNT(s.disabledAt)', 'disabled'), []),
    // Through the feed version's index: what is newer than an instance has read, and what has no
    // version yet (made by the previous release during an upgrade).
    ownersSince: `${compile(
      table.select('s', ['owner', 'feedVersion']).where('s.feedVersion > :after OR s.feedVersion IS NULL'),
      ['after'],
    )} LIMIT ?`,
    readOwner: table.reader(['owner', 'feedVersion']),
  };
}
