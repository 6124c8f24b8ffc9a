import { toExactJson } from '../common/json/exact-json';
import { int64Transformer } from '../common/int64';
import { PlantChange, PlantChanges, WEBHOOK_EVENT_TYPES, WebhookEvent } from './events';

/**
 * The columns the previous release reads and writes, kept in step while its instances may still run
 * beside this one during a rolling upgrade (docs/operations.md, "Upgrades"): it knows a
 * subscription's events by one flag column per event type, and a delivery's data by three plant
 * columns. This release writes them alongside `events` and `data`, and reads them where a row
 * written by the previous release has no `events` or `data`. A later release stops writing them and
 * drops them, and this file goes (docs/development.md, "Adding a migration").
 */

/**
 * The previous release gives a subscription it creates a random 63-bit id and no public id (see
 * the SubscriptionIdsSafeInJavaScript migration): until it has one, the API shows its key.
 * Every instance of this release gives up to this many such subscriptions a public id each time it
 * prunes (WebhookDispatcher, at its start and every 10 minutes), so those created during an upgrade
 * show one within minutes.
 */
export const PUBLIC_IDS_PER_ROUND = 100;

/** The previous release's flag column of each event type it knew. */
export const PREVIOUS_EVENT_FLAGS: Partial<Record<WebhookEvent, 'on_created' | 'on_deleted'>> = {
  'plant.created': 'on_created',
  'plant.deleted': 'on_deleted',
};

/** The flag columns' values for a subscription to `events`, in the order of PREVIOUS_EVENT_FLAGS. */
export function previousFlags(events: readonly WebhookEvent[]): number[] {
  return (Object.keys(PREVIOUS_EVENT_FLAGS) as WebhookEvent[]).map((type) => (events.includes(type) ? 1 : 0));
}

/** A subscription's events from its flags, where the previous release created it. */
export function eventsFromFlags(row: Record<string, unknown>): WebhookEvent[] {
  return (Object.entries(PREVIOUS_EVENT_FLAGS) as [WebhookEvent, string][])
    .filter(([, column]) => Number(row[column]) === 1)
    .map(([type]) => type);
}

/** The previous release's plant columns of a delivery: plant_id, plant_name, plant_tag. */
export function previousPlantColumns<Change extends PlantChange>(
  change: Change,
  plant: PlantChanges[Change],
): [bigint, string | null, string | null] {
  const created = change === 'created' ? (plant as PlantChanges['created']) : undefined;
  return [plant.id, created?.name ?? null, created?.tag ?? null];
}

/** A delivery's `data` from the plant columns, where the previous release recorded it. */
export function dataFromPlantColumns(type: WebhookEvent, row: Record<string, unknown>): string {
  const id = int64Transformer.from(row.plant_id as string | bigint) as bigint;
  const declaration = WEBHOOK_EVENT_TYPES[type];
  const plant =
    declaration.on === 'created'
      ? row.plant_tag === null || row.plant_tag === undefined
        ? { id, name: String(row.plant_name) }
        : { id, name: String(row.plant_name), tag: String(row.plant_tag) }
      : { id };
  return toExactJson((declaration.data as (plant: object) => object)(plant))!;
}
