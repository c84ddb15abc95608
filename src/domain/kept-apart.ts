/**
 * Lists of words that the engine should not read as text: the engine records every pair of words
 * within 7 positions of each other (for its proximity rule), its largest structure, and in a list
 * of distinct words (a document's word forms, a large session's vocabulary) neighbours were never
 * neighbours in the text. A hard separator (`;`, which the engine counts as 8 positions) between
 * two entries keeps their pair out; an entry of several words (an identifier's forms) stays
 * together. `;` is one byte where ` . ` was three: about a seventh of the word forms' stored
 * bytes (`,`, also one byte, is a soft separator to the engine: it keeps pairs). The engine reads at most 65,535 positions of an attribute, so separators are used only
 * as far as they fit: past that, entries follow each other.
 */

const APART = ';';
/** Positions an attribute may use (the engine drops words past 65,535). */
const POSITIONS = 65_000;
/** Positions the engine counts for a hard separator. */
const SEPARATOR_POSITIONS = 8;

/** `entries` joined for an attribute, apart as far as positions allow; `words`: how many words they hold in all. */
export function keptApart(entries: Iterable<string>, words: number): string {
  let separators = Math.max(0, Math.floor((POSITIONS - words) / SEPARATOR_POSITIONS));
  let out = '';
  for (const entry of entries) out += out === '' ? entry : separators-- > 0 ? APART + entry : ` ${entry}`;
  return out;
}

/** A list joined by keptApart, its separators out (entries one space apart): for readers other than the engine. */
export const withoutSeparators = (list: string): string => list.split(APART).join(' ');
