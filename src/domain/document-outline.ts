/**
 * Where a session's fragments and the reader's exchanges are in its markdown: the outline a
 * whole-indexed document stores, and the exchange positions each fragment document carries.
 */
import { ExchangeScanner } from './exchanges';
import { fragmentsOf } from './markdown-chunks';

/**
 * Where the fragments and the exchanges of a session indexed whole are, computed when it is
 * indexed and stored in its document, so that a search marking its matching exchanges neither
 * cuts its text into fragments nor scans it for exchanges (both would be done again for every hit
 * of every search: ~0.25 ms of CPU per search at 10k sessions, ~0.01 ms with the outline).
 * Offsets are UTF-16 units of the markdown, what a search has of it; the reader's exchanges count
 * bytes, given for each fragment.
 */
export interface Outline {
  /** The non-blank fragments (fragmentsOf), flat: start, end and byte start of each, in order. */
  f: number[];
  /** Where each of the reader's exchanges begins, ascending; [0] is 0. */
  x: number[];
  /** Each exchange's title. */
  t: string[];
}

export function outlineOf(markdown: string): Outline {
  const f = fragmentsOf(markdown).flatMap((fr) => [fr.start, fr.start + fr.content.length, fr.byteStart]);
  const bytes = Buffer.from(markdown, 'utf8');
  const entries = exchangeEntriesOf(bytes);
  const x: number[] = [];
  // Byte offsets to UTF-16 ones (an exchange begins at a line start: a character boundary).
  let units = 0;
  let at = 0;
  for (const e of entries) {
    units += bytes.length === markdown.length ? e.start - at : bytes.subarray(at, e.start).toString('utf8').length;
    at = e.start;
    x.push(units);
  }
  return { f, x, t: entries.map((e) => e.title) };
}

const isOffsets = (v: unknown, length: number): v is number[] => Array.isArray(v) && v.every((n) => Number.isInteger(n) && n >= 0 && n <= length);

/** Fragments as outlineOf lays them out: start ≤ end ≤ `length`, ascending, a byte start ≥ its start. */
function isFragments(f: unknown, length: number): f is number[] {
  if (!Array.isArray(f) || f.length % 3 !== 0) return false;
  let last = 0;
  for (let i = 0; i < f.length; i += 3) {
    const [start, end, byteStart] = [f[i], f[i + 1], f[i + 2]] as unknown[];
    if (!Number.isInteger(start) || !Number.isInteger(end) || !Number.isInteger(byteStart)) return false;
    const [s, e, b] = [start, end, byteStart] as number[];
    if (s < last || e < s || e > length || b < s) return false;
    last = e;
  }
  return true;
}

/**
 * A document's stored outline when it is one of `content` as this version builds them; otherwise
 * (a document indexed before outlines existed, or not by us) the outline computed from `content`.
 */
export function outlineFor(stored: unknown, content: string): Outline {
  let o: Partial<Outline> | null | undefined;
  try {
    o = typeof stored === 'string' ? (JSON.parse(stored) as Partial<Outline>) : null;
  } catch {
    o = null;
  }
  const valid =
    o != null &&
    isFragments(o.f, content.length) &&
    isOffsets(o.x, content.length) &&
    o.x[0] === 0 &&
    Array.isArray(o.t) &&
    o.t.length === o.x.length &&
    o.t.every((t) => typeof t === 'string');
  return valid ? (o as Outline) : outlineOf(content);
}

/** The reader's exchanges (services/exchanges.ts): byte offsets where they begin, ascending ([0] is 0), and titles. */
export function exchangeEntriesOf(markdown: string | Buffer): Array<{ start: number; title: string }> {
  const scanner = new ExchangeScanner();
  scanner.feed(typeof markdown === 'string' ? Buffer.from(markdown, 'utf8') : markdown);
  return scanner.finish().entries.map((e) => ({ start: e.start, title: e.title }));
}

/** Byte offsets where the reader's exchanges begin (services/exchanges.ts), ascending; [0] is 0. */
export function exchangeStartsOf(markdown: string): number[] {
  return exchangeEntriesOf(markdown).map((e) => e.start);
}

/** The exchange number (from 1) holding byte `offset`, given exchangeStartsOf. */
export function exchangeNumberAt(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

export const exchangeAt = (starts: number[], byteStart: number) => ({ exchange: exchangeNumberAt(starts, byteStart) });

/** Where, within a fragment, further exchanges begin (UTF-16 offsets into its content). */
export function breaksIn(starts: number[], byteStart: number, content: string): { exchangeBreaks: number[] } {
  const bytes = Buffer.from(content, 'utf8');
  const end = byteStart + bytes.length;
  const out: number[] = [];
  for (let i = exchangeNumberAt(starts, byteStart); i < starts.length && starts[i] < end; i++) {
    if (starts[i] > byteStart) out.push(bytes.subarray(0, starts[i] - byteStart).toString('utf8').length);
  }
  return { exchangeBreaks: out };
}
