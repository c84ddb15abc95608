/**
 * Server-side secret redaction (docs/security.md). A small pure API, callable from wherever the
 * upload path runs (main thread or a worker):
 *
 *   redact(text | buffer) → { output, findings, count }
 *
 * Each secret is replaced by a mask of the same UTF-8 byte length (`[REDACTED:<rule>]` padded
 * with `*`, or only `*` when the secret is shorter), so sizes and JSON / JSON Lines structure are
 * unchanged. Findings name the rule and how often it hit, never a value.
 */
import { findSpans, type Span } from './engine';

export type RedactMode = 'on' | 'report' | 'off';

/** Rule id → number of secrets found. */
export type Findings = Record<string, number>;

export interface Redaction {
  rule: string;
  count: number;
}

interface RedactResult<T> {
  output: T;
  findings: Findings;
  /** Number of secrets found (0: output is the input, same object). */
  count: number;
}

interface RedactOptions {
  /** Bytes only: mask in the given buffer (its owner no longer needs the original) instead of a copy. */
  inPlace?: boolean;
}

export function redact(input: string): RedactResult<string>;
export function redact(input: Buffer, opts?: RedactOptions): RedactResult<Buffer>;
export function redact(input: string | Buffer, opts: RedactOptions = {}): RedactResult<string | Buffer> {
  if (typeof input !== 'string') return redactBytes(input, opts.inPlace === true);
  return redactText(input);
}

/** The text of buffers made by `bytesOf` from ASCII text, which is then scanned as it is. */
const asciiText = new WeakMap<Buffer, string>();

/**
 * The UTF-8 bytes of `text`. When the text is ASCII (its bytes are its characters), a later
 * `redact` of the bytes scans the text itself instead of making a Latin-1 copy of them.
 */
export function bytesOf(text: string): Buffer {
  const b = Buffer.from(text, 'utf8');
  if (b.length === text.length && b.length > 0) asciiText.set(b, text);
  return b;
}

/**
 * Bytes are scanned as Latin-1 text: one character per byte, so no UTF-8 decoding (which cost
 * half the scan) and a one-byte string that the engine's expressions run through faster. Every
 * rule matches ASCII, and a UTF-8 sequence's bytes are all ≥ 0x80, never ASCII: what is found is
 * what the UTF-8 text holds, at byte offsets. A span is widened to whole UTF-8 characters (a
 * value cut at its length limit could end inside one), then masked in a copy of the bytes (or in
 * the bytes themselves, `inPlace`). Bytes made by `bytesOf` from ASCII text skip the Latin-1 copy:
 * that text is the same characters.
 */
function redactBytes(input: Buffer, inPlace: boolean): RedactResult<Buffer> {
  if (input.length === 0) return { output: input, findings: {}, count: 0 };
  const spans = merge(findSpans(asciiText.get(input) ?? input.toString('latin1')));
  if (spans.length === 0) return { output: input, findings: {}, count: 0 };
  let output = input;
  if (inPlace) asciiText.delete(input);
  else output = Buffer.from(input);
  const findings: Findings = {};
  let done = 0;
  for (const s of spans) {
    let start = Math.max(s.start, done);
    let end = s.end;
    while (start > done && (input[start] & 0xc0) === 0x80) start--;
    while (end < input.length && (input[end] & 0xc0) === 0x80) end++;
    if (end <= start) continue;
    findings[s.rule] = (findings[s.rule] ?? 0) + 1;
    output.write(mask(s.rule, end - start), start, 'latin1');
    done = end;
  }
  return { output, findings, count: Object.values(findings).reduce((a, b) => a + b, 0) };
}

function redactText(text: string): RedactResult<string> {
  if (text.length === 0) return { output: text, findings: {}, count: 0 };
  const spans = merge(findSpans(text));
  if (spans.length === 0) return { output: text, findings: {}, count: 0 };
  const findings: Findings = {};
  const parts: string[] = [];
  let at = 0;
  for (const s of spans) {
    findings[s.rule] = (findings[s.rule] ?? 0) + 1;
    parts.push(text.slice(at, s.start), mask(s.rule, Buffer.byteLength(text.slice(s.start, s.end), 'utf8')));
    at = s.end;
  }
  parts.push(text.slice(at));
  return { output: parts.join(''), findings, count: spans.length };
}

/** `[REDACTED:<rule>]` padded with `*` to `bytes`, or `*` × bytes when shorter than the label. */
export function mask(rule: string, bytes: number): string {
  const label = `[REDACTED:${rule}]`;
  return label.length <= bytes ? label + '*'.repeat(bytes - label.length) : '*'.repeat(bytes);
}

/** Sorted, non-overlapping: of two overlapping spans the earlier (then the longer) wins. */
function merge(spans: Span[]): Span[] {
  if (spans.length <= 1) return spans;
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Span[] = [];
  for (const s of spans) {
    const last = out[out.length - 1];
    if (last && s.start < last.end) {
      if (s.end > last.end) last.end = s.end;
      continue;
    }
    out.push({ ...s });
  }
  return out;
}

/** Adds `more` into `into` (returns `into`). */
export function addFindings(into: Findings, more: Findings): Findings {
  for (const [rule, n] of Object.entries(more)) into[rule] = (into[rule] ?? 0) + n;
  return into;
}

/** Findings as the API shows them: `[{rule, count}]`, sorted by rule. */
export function toRedactions(findings: Findings): Redaction[] {
  return Object.keys(findings)
    .sort()
    .map((rule) => ({ rule, count: findings[rule] }));
}
