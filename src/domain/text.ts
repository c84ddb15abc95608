/** Text as the API measures it: lengths count Unicode code points, not UTF-16 units. */
const codePoints = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/** A value a client sent, as text for an error message (an object or array shows as its JSON). */
export const sentText = (v: unknown): string => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));

/** A lone UTF-16 surrogate: JSON can carry one, UTF-8 (and so the database) cannot. */
export function hasLoneSurrogate(s: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
}

/** What is wrong with a string of `min`–`max` code points, if anything. */
export function textProblem(v: string, field: string, min: number, max: number): string | undefined {
  if (hasLoneSurrogate(v)) return `Invalid value for ${field}: not valid Unicode text`;
  const n = codePoints(v);
  if (n >= min && n <= max) return undefined;
  if (min === max) return `Invalid value for ${field}: must be ${min} characters`;
  if (n < min && min === 1) return `Invalid value for ${field}: must not be empty`;
  return `Invalid value for ${field}: must be ${min}-${max} characters`;
}
