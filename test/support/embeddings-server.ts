/**
 * A small embeddings endpoint for tests, started on a free local port: OpenAI-compatible
 * (`POST /v1/embeddings` → `{data: [{embedding, index}], model, usage}`) and deterministic — each
 * word is mapped through a tiny synonym table to a concept, concepts are hashed into `dims`
 * buckets, and the vector is normalised — so that a query sharing no word with a session but
 * naming the same concepts lands next to it. It counts requests and keeps every input, and can be
 * made to fail, stall or answer slowly. close() ends every connection and the listener.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Words of one concept (the first names it). */
const SYNONYMS: Record<string, string> = { sql: 'postgres', database: 'postgres', reservoir: 'pool', drained: 'exhausted', depleted: 'exhausted' };

const words = (text: string) => (text.toLowerCase().match(/[a-z]+/g) ?? []).map((w) => SYNONYMS[w] ?? w);
const bucket = (w: string, dims: number) => crypto.createHash('sha256').update(w).digest().readUInt32BE(0) % dims;

/** The vector of `text` in `dims` dimensions. */
export function embed(text: string, dims: number): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const w of words(text)) if (w.length > 3) v[bucket(w, dims)] += 1;
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

export type Mode = 'ok' | 'fail' | 'stall';

/** The embeddings server for vectors of `dims` dimensions: counts requests, keeps their inputs, answers per `mode`. */
export class EmbeddingsServer {
  constructor(readonly dims: number) {}

  mode: Mode = 'ok';
  /** How long each answer waits (a slow endpoint). */
  delayMs = 0;
  requests = 0;
  inputs: string[] = [];
  private readonly stalled = new Set<http.ServerResponse>();
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.requests++;
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; input: string[] };
      this.inputs.push(...body.input);
      if (req.url !== '/v1/embeddings' || req.method !== 'POST' || this.mode === 'fail') {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"down"}}');
        return;
      }
      if (this.mode === 'stall') {
        this.stalled.add(res);
        return;
      }
      const data = body.input.map((t, index) => ({ object: 'embedding', index, embedding: embed(t, this.dims) }));
      const answer = () =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } }));
      if (this.delayMs > 0) setTimeout(answer, this.delayMs);
      else answer();
    });
  });

  url = '';

  async start(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/embeddings`;
    return this.url;
  }

  setMode(mode: Mode): void {
    this.mode = mode;
    for (const res of this.stalled) res.destroy();
    this.stalled.clear();
  }

  async close(): Promise<void> {
    this.setMode('fail');
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
