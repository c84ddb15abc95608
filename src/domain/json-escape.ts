/**
 * JSON string escaping of UTF-8 bytes, without decoding them: the body of a JSON string literal
 * (no surrounding quotes) whose bytes are exactly those `JSON.stringify` would produce for the
 * same text. Only `"`, `\` and the control characters U+0000–U+001F are escaped; every other byte,
 * multi-byte sequences included, is copied as it is, so a chunk may end inside a character (the
 * next chunk continues it). Input must be well-formed UTF-8 as a whole (stored content is: it was
 * encoded from JavaScript strings), so there is no lone surrogate for JSON.stringify to escape.
 *
 * Used to stream a large text inside a JSON document (REST GET of a session as JSON): no string
 * of the content is ever made, and a chunk without anything to escape goes out without a copy.
 */
const SHORT: Record<number, string> = { 0x08: '\\b', 0x09: '\\t', 0x0a: '\\n', 0x0c: '\\f', 0x0d: '\\r', 0x22: '\\"', 0x5c: '\\\\' };

/** The escape of one byte that needs it (what JSON.stringify writes, lower-case hex). */
const ESCAPES: Buffer[] = Array.from({ length: 256 }, (_v, b) => {
  if (SHORT[b]) return Buffer.from(SHORT[b], 'latin1');
  if (b < 0x20) return Buffer.from(`\\u${b.toString(16).padStart(4, '0')}`, 'latin1');
  return Buffer.alloc(0);
});
const needsEscape = (b: number) => b < 0x20 || b === 0x22 || b === 0x5c;

/** `bytes` escaped for the inside of a JSON string: `bytes` itself when nothing needs escaping. */
export function escapeJsonStringBytes(bytes: Buffer): Buffer {
  let extra = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (needsEscape(b)) extra += ESCAPES[b].length - 1;
  }
  if (extra === 0) return bytes;
  const out = Buffer.allocUnsafe(bytes.length + extra);
  let o = 0;
  let runStart = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (!needsEscape(b)) continue;
    if (i > runStart) o += bytes.copy(out, o, runStart, i);
    o += ESCAPES[b].copy(out, o);
    runStart = i + 1;
  }
  if (bytes.length > runStart) o += bytes.copy(out, o, runStart, bytes.length);
  return out;
}
