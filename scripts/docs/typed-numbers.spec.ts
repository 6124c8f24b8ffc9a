import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, facts } from './facts';
import { Facts } from './fragments';
import { quantities, sentencesOf, typedFacts } from './typed-numbers';

const FACTS: Facts = {
  'default:DB_QUERY_TIMEOUT_MS': { text: '5 seconds', about: /\bDB_QUERY_TIMEOUT_MS\b/ },
  'max:WEBHOOK_CONCURRENCY': { text: '1,000', about: /\bWEBHOOK_CONCURRENCY\b/ },
  'linger-max-bytes': { text: '4 MiB', about: /lingering/ },
  'min:WEBHOOK_CONCURRENCY': { text: '1', about: /\bWEBHOOK_CONCURRENCY\b/ },
  'retry-table': { block: true, text: '| 1 | 5 s |' },
};

describe(quantities.name, () => {
  it.each([
    ['default 5,000', [5000, 'count']],
    ['10 000 ms', [10_000, 'ms']],
    ['(60 s)', [60_000, 'ms']],
    ['0.2 s', [200, 'ms']],
    ['after 5 seconds', [5000, 'ms']],
    ['for 10 minutes', [600_000, 'ms']],
    ['4 MiB more', [4 * 1024 * 1024, 'bytes']],
    ['16 KiB', [16 * 1024, 'bytes']],
    ['below 90% of lines', [90, 'percent']],
    ['up to 1,000', [1000, 'count']],
  ])('reads %p as one number with its unit', (text, [value, unit]) => {
    expect(quantities(text).map((q) => [q.value, q.unit])).toEqual([[value, unit]]);
  });

  it('reads no number inside a name, a version, a power or a prefix length', () => {
    expect(quantities('SHA-256, AES-256-GCM, v1, IPv6, 2^53, per /64, Node.js 22.15+, 5d3')).toEqual([]);
  });
});

describe(sentencesOf.name, () => {
  it('leaves out code blocks and stands a fact stated between markers for its name', () => {
    const document = [
      'It waits `DB_QUERY_TIMEOUT_MS` (<!-- fact: default:DB_QUERY_TIMEOUT_MS -->5 seconds<!-- /fact --> by default). Then',
      'it gives up.',
      '',
      '  ```sh',
      '  DB_QUERY_TIMEOUT_MS=5000 npm start',
      '  ```',
      '',
      '- one item, 3 lines',
      '| a | 5 s |',
    ].join('\n');
    expect(sentencesOf(document)).toEqual([
      'It waits `DB_QUERY_TIMEOUT_MS` (⟦default:DB_QUERY_TIMEOUT_MS⟧ by default).',
      'Then it gives up.',
      '- one item, 3 lines',
      '| a | 5 s |',
    ]);
  });
});

describe(typedFacts.name, () => {
  it('finds a setting value typed in a sentence that names the setting, in any way of writing it', () => {
    const document =
      'Statements wait `DB_QUERY_TIMEOUT_MS` (default 5,000). A pause of 5 s is all it takes.\n\n' +
      '| `DB_QUERY_TIMEOUT_MS` | 5 s |\n\nRaise `WEBHOOK_CONCURRENCY` (up to 1000).\n';
    expect(typedFacts(document, FACTS).map(({ fact, written }) => [fact, written])).toEqual([
      ['default:DB_QUERY_TIMEOUT_MS', '5,000'],
      ['default:DB_QUERY_TIMEOUT_MS', '5 s'],
      ['max:WEBHOOK_CONCURRENCY', '1000'],
    ]);
  });

  it('finds a constant typed in a sentence its words name', () => {
    const found = typedFacts('The lingering close reads at most 4 MiB more.', FACTS);
    expect(found).toEqual([
      { fact: 'linger-max-bytes', written: '4 MiB', sentence: 'The lingering close reads at most 4 MiB more.' },
    ]);
  });

  it('leaves alone a value between its markers, in code, in a sentence that does not name it, or of another unit', () => {
    const document = [
      'Statements wait `DB_QUERY_TIMEOUT_MS` (<!-- fact: default:DB_QUERY_TIMEOUT_MS -->5 seconds<!-- /fact --> by default).',
      'Set `DB_QUERY_TIMEOUT_MS=5000` for that.',
      'A pause of 5 s is no timeout.',
      'Raise `WEBHOOK_CONCURRENCY` when 1,000 bytes wait, or on 1 core.',
    ].join('\n\n');
    expect(typedFacts(document, FACTS)).toEqual([]);
  });

  it('does not guard 0 and 1, block facts, or facts without words that name them', () => {
    expect(typedFacts('`WEBHOOK_CONCURRENCY` is 1 or more. The retry table: | 1 | 5 s |', FACTS)).toEqual([]);
  });

  /** Sentences of the docs as they were before their numbers were facts. */
  it.each([
    [
      'docs/webhooks.md',
      'A receiver that answers in 200 ms gets at most `WEBHOOK_CONCURRENCY` ÷ 0.2 s = 640 events a second from one process; raise `WEBHOOK_CONCURRENCY` (up to 1,000) before adding workers.',
      ['deliveries-per-second-at-200-ms', 'max:WEBHOOK_CONCURRENCY'],
    ],
    [
      'docs/webhooks.md',
      'Connecting, sending and receiving the answer together get `WEBHOOK_TIMEOUT_MS` (10 seconds by default, and at most).',
      ['default:WEBHOOK_TIMEOUT_MS', 'max:WEBHOOK_TIMEOUT_MS'],
    ],
    [
      'docs/webhooks.md',
      'Moves their `next_attempt_at` one lease ahead (a lease is 2 × `WEBHOOK_TIMEOUT_MS` + 5 s, 25 s by default).',
      ['attempt-lease'],
    ],
    [
      'docs/scaling.md',
      '- **`DB_QUERY_TIMEOUT_MS`** (the service; default 5,000): a statement that waits longer is answered 503.',
      ['default:DB_QUERY_TIMEOUT_MS'],
    ],
    ['docs/operations.md', 'It works in batches (`--batch-size`, 500 by default).', ['reseal-batch']],
    [
      'docs/api.md',
      'The close is staged (as nginx does a lingering close), and cuts the connection after at most 4 MiB more, 30 s, or 5 s without a byte.',
      ['linger-max-bytes', 'linger-max', 'linger-idle'],
    ],
  ])('catches a typed number put back into %s', (file, sentence, expected) => {
    const document = `${readFileSync(join(ROOT, file), 'utf8')}\n${sentence}\n`;
    expect([...new Set(typedFacts(document, facts()).map(({ fact }) => fact))].sort()).toEqual([...expected].sort());
  });
});
