/**
 * Scores the redactor on the labelled corpus (test/redact/corpus.json), each positive placed in
 * three containers: a markdown transcript, an escaped JSON Lines record of raw data, and a gzip
 * upload body (inflated and parsed the way the service does before redacting).
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import { redact } from '../../src/redact';
import { CORPUS_PATH, type Corpus, type Positive } from '../../scripts/gen-redact-corpus';

export type Container = 'markdown' | 'raw-json' | 'gzip-body';
export const CONTAINERS: Container[] = ['markdown', 'raw-json', 'gzip-body'];

export function loadCorpus(): Corpus {
  return JSON.parse(fs.readFileSync(CORPUS_PATH, 'utf8')) as Corpus;
}

export interface Outcome {
  found: boolean;
  /** Byte length, and for raw data JSON validity, kept. */
  shapeKept: boolean;
}

const markdownDoc = (text: string) => `# Session\n\n## User\n\nCan you check this?\n\n${text}\n\n## Assistant\n\nDone.\n`;
const rawLine = (text: string) => `${JSON.stringify({ type: 'user', message: { role: 'user', content: text } })}\n`;

/** Redacts `text` inside `container`; returns what survives (decoded) and whether the shape held. */
export function runIn(container: Container, text: string): { visible: string; shapeKept: boolean; count: number } {
  if (container === 'markdown') {
    const doc = markdownDoc(text);
    const r = redact(Buffer.from(doc));
    return { visible: r.output.toString('utf8'), shapeKept: r.output.length === Buffer.byteLength(doc), count: r.count };
  }
  if (container === 'raw-json') {
    const raw = rawLine(text) + rawLine('next line');
    const r = redact(Buffer.from(raw));
    const out = r.output.toString('utf8');
    let visible = '';
    let valid = true;
    try {
      visible = out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).message.content)
        .join('\n');
    } catch {
      valid = false;
      visible = out;
    }
    return { visible, shapeKept: valid && r.output.length === Buffer.byteLength(raw), count: r.count };
  }
  const body = zlib.gzipSync(Buffer.from(JSON.stringify({ name: 'gz', markdown: markdownDoc(text), rawData: rawLine(text) })));
  const parsed = JSON.parse(zlib.gunzipSync(body).toString('utf8')) as { markdown: string; rawData: string };
  const md = redact(Buffer.from(parsed.markdown));
  const raw = redact(Buffer.from(parsed.rawData));
  const visible = md.output.toString('utf8') + '\n' + JSON.parse(raw.output.toString('utf8')).message.content;
  return { visible, shapeKept: md.output.length === Buffer.byteLength(parsed.markdown), count: md.count + raw.count };
}

export function scorePositive(p: Positive, container: Container): Outcome {
  const r = runIn(container, p.text);
  return { found: !r.visible.includes(p.secret), shapeKept: r.shapeKept };
}

export interface Score {
  byFormat: Map<string, { kind: string; total: number; found: number }>;
  prefixed: { total: number; found: number };
  contextual: { total: number; found: number };
  negatives: { total: number; flagged: number; examples: string[] };
  shapeBroken: number;
}

export function score(corpus: Corpus): Score {
  const s: Score = {
    byFormat: new Map(),
    prefixed: { total: 0, found: 0 },
    contextual: { total: 0, found: 0 },
    negatives: { total: 0, flagged: 0, examples: [] },
    shapeBroken: 0,
  };
  for (const p of corpus.positives) {
    for (const c of CONTAINERS) {
      const o = scorePositive(p, c);
      const f = s.byFormat.get(p.format) ?? { kind: p.kind, total: 0, found: 0 };
      f.total++;
      if (o.found) f.found++;
      s.byFormat.set(p.format, f);
      s[p.kind].total++;
      if (o.found) s[p.kind].found++;
      if (!o.shapeKept) s.shapeBroken++;
    }
  }
  for (const n of corpus.negatives) {
    for (const c of CONTAINERS) {
      s.negatives.total++;
      const r = runIn(c, n.text);
      if (r.count > 0) {
        s.negatives.flagged++;
        if (s.negatives.examples.length < 20) s.negatives.examples.push(`${n.id} [${c}]: ${n.text.slice(0, 80)}`);
      }
      if (!r.shapeKept) s.shapeBroken++;
    }
  }
  return s;
}
