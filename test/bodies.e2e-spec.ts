import {
  anyDateTime,
  bodyOf,
  exampleBodyOf,
  expectedCreatedWebhook,
  expectedDelivery,
  expectedPlant,
  expectedWebhook,
  plantText,
} from './utils/bodies';
import { contract } from './utils/openapi-contract';

/** A created plant's answer as the contract checker reads one. */
const createdPlant = (body: string) =>
  contract().check({
    method: 'POST',
    url: '/plants',
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: Buffer.from(body),
  });

/** The builders every spec's expected bodies come from (test/utils/bodies.ts): exact, from openapi.json. */
describe('expected bodies', () => {
  const webhook = { id: 1n, url: 'https://example.com/hook', events: ['plant.created'] };

  it('are the values given, an optional property absent unless given, and nothing else', () => {
    // A plant as the service would answer it: what the spec gives, and whatever else the schema requires.
    const fern = exampleBodyOf('Plant', { id: 1, name: 'Fern' });
    expect(fern).toEqual(expectedPlant({ id: 1, name: 'Fern' }));
    expect({ ...fern, tag: 'green' }).toEqual(expectedPlant({ id: 1, name: 'Fern', tag: 'green' }));
    expect({ ...fern, tag: null }).not.toEqual(expectedPlant({ id: 1, name: 'Fern' }));
    expect({ ...fern, tag: 'green' }).not.toEqual(expectedPlant({ id: 1, name: 'Fern' }));
    expect({ ...fern, colour: 'green' }).not.toEqual(expectedPlant({ id: 1, name: 'Fern' }));
    expect(fern).not.toEqual(expectedPlant({ id: 2, name: 'Fern' }));
  });

  it('match a date-time the service sets as any date-time, unless given', () => {
    const listed = { ...webhook, createdAt: '2026-11-24T09:30:00.123Z', enabled: true };
    expect(listed).toEqual(expectedWebhook(webhook));
    expect({ ...listed, createdAt: 'yesterday' }).not.toEqual(expectedWebhook(webhook));
    expect({ ...listed, enabled: undefined }).not.toEqual(expectedWebhook(webhook));
    expect(listed).not.toEqual(expectedWebhook({ ...webhook, createdAt: '2026-11-24T09:30:00.124Z' }));
    expect({ ...listed, secret: `whsec_${'A'.repeat(43)}=` }).toEqual(expectedCreatedWebhook(webhook));
    expect({ ...listed, secret: 'whsec_short' }).not.toEqual(expectedCreatedWebhook(webhook));
  });

  it('refuse a property the schema does not declare, and a required one not given', () => {
    expect(() => expectedPlant({ id: 1, name: 'Fern', colour: 'green' })).toThrow('Plant declares no colour');
    expect(() => bodyOf('Webhook', { id: 1n })).toThrow('Webhook requires url: give it');
    expect(() => bodyOf('Nothing', {})).toThrow('openapi.json has no object schema Nothing');
  });

  it('hold an event body to its schema, its data the plant as created', () => {
    const fern = exampleBodyOf('Plant', { id: 7n, name: 'Fern' });
    const body = { type: 'plant.created', timestamp: '2026-11-24T09:30:00.123Z', data: fern };
    expect(body).toEqual(expectedDelivery('plant.created', { id: 7n, name: 'Fern' }));
    expect({ ...body, data: { id: 7n } }).not.toEqual(expectedDelivery('plant.created', { id: 7n, name: 'Fern' }));
    expect({ ...body, type: 'plant.deleted' }).not.toEqual(expectedDelivery('plant.created', { id: 7n, name: 'Fern' }));
  });

  it('give a body the document accepts with the examples of what a spec leaves out, int64 exact', () => {
    expect(createdPlant(plantText({ id: 7n }))).toEqual([]);
    expect(createdPlant(plantText({ id: 7n, name: undefined })).join()).toMatch(/required property 'name'/);
    const biggest = plantText({ id: 2n ** 63n - 1n, name: 'x', tag: undefined });
    expect(biggest).toMatch(/^\{"id":9223372036854775807,"name":"x"[,}]/);
    expect(biggest).not.toContain('tag');
  });
});

describe('any date-time', () => {
  it.each([['2026-11-24T09:30:00Z'], ['2026-11-24T09:30:00.123+01:00'], [new Date(0)]])('is %p', (value) => {
    expect(value).toEqual(anyDateTime);
  });

  it.each([['2026-11-24'], ['2026-13-45T99:99:99Z'], ['x'], [new Date(Number.NaN)], [0], [null]])(
    'is not %p',
    (value) => {
      expect(value).not.toEqual(anyDateTime);
    },
  );
});
