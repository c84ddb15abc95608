/**
 * Text as the search engine holds it: `<` and `>` swapped with `‹` and `›` (U+2039, U+203A).
 *
 * Transcripts are full of inline HTML and JSX, and the engine's tokenizer reads `<` and `>` as
 * parts of words: `<b>word</b>` holds no word `word`. The engine's separators include `‹` and
 * `›`, and declaring `<` and `>` as separators of our own (the index setting `separatorTokens`)
 * makes the engine build its tokenizer again for every query, about 3 ms each
 * (`bench/engine-floor.ts`), in every query of every search (6–9 for a search of several words,
 * 30 or more for related sessions). So the text we send swaps them, and the text we read back
 * swaps them again. The swap is its own inverse and keeps every offset (one UTF-16 unit for one),
 * so what is read back is exactly what was sent; a `‹` or `›` written in a transcript is held as
 * `<` or `>` and, as before the swap, glues to the word beside it.
 *
 * Everything searchable sent to the engine goes through it (a document's name, tags and text; a
 * query's phrases), and everything read back that is shown or marked (the text of a hit or a
 * fragment, what is sent to the embedding endpoint).
 */
const SWAPPED: Readonly<Record<string, string>> = { '<': '‹', '>': '›', '‹': '<', '›': '>' };
const ANGLES = /[<>‹›]/g;

/** `text` as the engine holds it, or, given the engine's, as it was written. */
export const engineText = (text: string): string => text.replace(ANGLES, (c) => SWAPPED[c]);
