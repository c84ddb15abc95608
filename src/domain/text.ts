/** Text as the contract measures it (§9): lengths count Unicode code points, not UTF-16 units. */
export const codePoints = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/** A lone UTF-16 surrogate: JSON can carry one, UTF-8 (and so the database) cannot. */
export function hasLoneSurrogate(s: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
}
