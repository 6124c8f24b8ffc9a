import { Facts } from './fragments';

/**
 * Numbers typed where a fact belongs. A fact that says what names it in prose (`about`: a setting's
 * name, "lingering", "--batch-size") must not be typed outside its markers in a sentence so named: a
 * typed copy goes stale silently, the marked one is rewritten by `npm run docs`. Read on the prose
 * alone: code blocks and code spans hold examples and commands (QUOTED_IN_CODE holds the few values
 * there), and what is between fact markers is the code's.
 */

type Unit = 'ms' | 'bytes' | 'count' | 'percent';

export interface Quantity {
  value: number;
  unit: Unit;
  /** As the document writes it. */
  written: string;
}

const UNITS: Readonly<Record<string, [Unit, number]>> = {
  ms: ['ms', 1],
  s: ['ms', 1000],
  second: ['ms', 1000],
  seconds: ['ms', 1000],
  min: ['ms', 60_000],
  minute: ['ms', 60_000],
  minutes: ['ms', 60_000],
  h: ['ms', 3_600_000],
  hour: ['ms', 3_600_000],
  hours: ['ms', 3_600_000],
  d: ['ms', 86_400_000],
  day: ['ms', 86_400_000],
  days: ['ms', 86_400_000],
  bytes: ['bytes', 1],
  KiB: ['bytes', 1024],
  MiB: ['bytes', 1024 * 1024],
  '%': ['percent', 1],
};

/**
 * A number standing alone (not part of a name, a version, a range of addresses or a power: not
 * `SHA-256`, `v1`, `2^53`, `/64`, `22.15+`), its digits grouped by commas or spaces or not, with
 * the unit written after it, if any.
 */
const NUMBER = new RegExp(
  String.raw`(?<![\w.\-/^×+])(\d{1,3}(?:[,  ]\d{3})+|\d+(?:\.\d+)?)(?:[  ]?(${Object.keys(UNITS).join('|')}))?(?![\w+]|\.\d|\^)`,
  'g',
);

/** The numbers a text states, each with its unit and its value in that unit's base (ms, bytes). */
export function quantities(text: string): Quantity[] {
  return [...text.matchAll(NUMBER)].map(([written, digits, unitName]) => {
    const [unit, scale] = unitName ? UNITS[unitName] : (['count', 1] as const);
    return { value: Number(digits.replace(/[,  ]/g, '')) * scale, unit, written };
  });
}

/** Whether `typed` states `fact`: the same value, with its unit or, for a duration or a size, none. */
function states(typed: Quantity, fact: Quantity): boolean {
  if (typed.value !== fact.value) return false;
  return typed.unit === fact.unit || (typed.unit === 'count' && (fact.unit === 'ms' || fact.unit === 'bytes'));
}

const FENCED = /^([ \t]*)(```|~~~)[^\n]*\n[\s\S]*?^\1\2[ \t]*$/gm;
const MARKED = /<!-- fact: ([^\s>]+) -->[\s\S]*?<!-- \/fact -->/g;
const CODE_SPAN = /(`+)[\s\S]*?\1/g;

/**
 * The prose of a document as sentences: without its code blocks, each fact it states left as
 * `⟦name⟧`; a table row, a list item or a heading ends one, and so does a full stop before a capital.
 */
export function sentencesOf(document: string): string[] {
  const prose = document.replace(FENCED, '').replace(MARKED, (_, name: string) => `⟦${name}⟧`);
  const blocks = prose
    .split(/\n(?=\s*(?:[-*+] |\d+\. |\||#|\n))/)
    .map((block) => block.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
  return blocks.flatMap((block) => block.split(/(?<=[.!?])\s+(?=[A-Z`*[(⟦])/));
}

export interface TypedFact {
  fact: string;
  written: string;
  sentence: string;
}

/** A fact that can be found typed: it says what names it, and it is one number. */
function guarded(facts: Facts): { name: string; about: RegExp; quantity: Quantity }[] {
  return Object.entries(facts).flatMap(([name, fact]) => {
    if (!fact.about) return [];
    const [quantity, ...more] = quantities(fact.text);
    if (!quantity || more.length > 0 || quantity.written !== fact.text.trim()) return [];
    // 0 and 1 are in too many sentences for anything else ("exits 0", "1 delete").
    return quantity.value === 0 || (quantity.unit === 'count' && quantity.value < 2)
      ? []
      : [{ name, about: fact.about, quantity }];
  });
}

/** The facts a document types outside their markers, in a sentence that names them. */
export function typedFacts(document: string, facts: Facts): TypedFact[] {
  const guards = guarded(facts);
  return sentencesOf(document).flatMap((sentence) => {
    const typed = quantities(sentence.replace(CODE_SPAN, ' '));
    return guards
      .filter(({ about }) => about.test(sentence))
      .flatMap(({ name, quantity }) =>
        typed.filter((number) => states(number, quantity)).map(({ written }) => ({ fact: name, written, sentence })),
      );
  });
}
