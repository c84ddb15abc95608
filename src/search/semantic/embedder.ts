/**
 * Semantic search's embeddings (docs/search.md, "Semantic search"): an OpenAI-compatible
 * `POST /v1/embeddings` endpoint (EMBEDDINGS_URL), asked by this service for the vectors of the
 * index's documents (embedding-sweeper.ts, under a per-minute budget) and of queries (a short
 * timeout: a search never waits long for it, and answers lexically when it fails).
 *
 * Requests go through node:http/https (Node's global fetch adds a stall on small responses, see
 * http-client.ts). Nothing here runs when EMBEDDINGS_URL is unset.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { EmbeddingsConfig } from '../../config';
import type { Logger } from '../../logger';

/** Characters of a document's text sent to be embedded (embedding models read a few thousand tokens). */
export const EMBED_MAX_CHARS = 6000;
/** A response larger than this is refused (a batch of 32 vectors of 8,192 numbers is ~6 MB). */
const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
/** How long a batch of document texts may take. */
const DOCUMENT_TIMEOUT_MS = 30_000;
/**
 * Document vectors kept in memory by a digest of the text embedded: a compaction re-pushes a
 * session's documents to the main index (without the recent index's flags, so with another
 * `hash`), and a change that leaves the text as it was needs no new vector either.
 */
const CACHE_MAX = 5000;
/** One log line per this interval and kind of failure, however many searches meet it. */
const LOG_EVERY_MS = 60_000;

/** What /metrics shows (src/metrics.ts). */
export interface EmbeddingStats {
  /** Requests to the endpoint, by kind (documents, query) and outcome (ok, failed). */
  requests: Record<'documents' | 'query', { ok: number; failed: number }>;
  /** Document texts embedded. */
  documents: number;
  /** Documents of the index waiting for their vector (at the last sweep; -1 before the first). */
  pending: number;
  /** The same on the standbys (MEILI_STANDBY_URLS) that were up at the last sweep, waiting for their primary's vectors. */
  standbyPending: number;
  /** Searches answered lexically because the query could not be embedded in time or the engine refused the hybrid query. */
  lexicalFallbacks: number;
}

class EmbeddingError extends Error {}

/** POST `body` as JSON to the endpoint; resolves with the parsed response, rejects on any failure or after `timeoutMs`. */
function postJson(config: EmbeddingsConfig, body: unknown, timeoutMs: number, inFlight: Set<http.ClientRequest>): Promise<unknown> {
  const url = new URL(config.url);
  const payload = Buffer.from(JSON.stringify(body));
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': payload.length,
          ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) req.destroy(new EmbeddingError('response too large'));
          else chunks.push(c);
        });
        res.on('end', () => {
          if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) return reject(new EmbeddingError(`answered ${res.statusCode}`));
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch {
            reject(new EmbeddingError('answered something other than JSON'));
          }
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new EmbeddingError(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    inFlight.add(req);
    req.on('close', () => inFlight.delete(req));
    req.end(payload);
  });
}

/** The vectors of an OpenAI-shaped answer (`{data: [{embedding, index}]}`), in input order, each of `dimensions` finite numbers. */
function vectorsOf(answer: unknown, count: number, dimensions: number): number[][] {
  const data = (answer as { data?: unknown })?.data;
  if (!Array.isArray(data) || data.length !== count)
    throw new EmbeddingError(`answered ${Array.isArray(data) ? data.length : 'no'} embeddings for ${count} inputs`);
  const out = new Array<number[]>(count);
  data.forEach((d: { embedding?: unknown; index?: unknown }, i) => {
    const at = typeof d?.index === 'number' ? d.index : i;
    const v = d?.embedding;
    if (!Array.isArray(v) || v.length !== dimensions || !v.every((x) => typeof x === 'number' && Number.isFinite(x)))
      throw new EmbeddingError(`answered an embedding that is not ${dimensions} numbers (EMBEDDINGS_DIMENSIONS)`);
    if (!Number.isInteger(at) || at < 0 || at >= count || out[at]) throw new EmbeddingError('answered embeddings out of order');
    out[at] = v as number[];
  });
  return out;
}

/**
 * A search's query is embedded only when it is a question in words: quoted phrases and
 * identifier-like words (camelCase, snake_case, kebab-case, dotted names and paths, error codes
 * such as ECONNRESET or TS2345) ask for exactly what is written, and stay lexical.
 */
export function isLexicalQuery(query: string): boolean {
  if (query.includes('"')) return true;
  for (const token of query.split(/\s+/).filter(Boolean)) {
    const w = token.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    if (!w) continue;
    if (/\p{Ll}\p{Lu}/u.test(w)) return true; // camelCase, PascalCase inside
    if (/[_./\\:#@$=<>()[\]{}-]/.test(w)) return true; // snake_case, kebab-case, paths, dotted, calls
    if (/\p{L}/u.test(w) && /\p{N}/u.test(w)) return true; // TS2345, E11000, v8
    if (/^\p{Lu}{4,}$/u.test(w)) return true; // ECONNRESET, EADDRINUSE
  }
  return false;
}

export class Embedder {
  private readonly stats: EmbeddingStats = {
    requests: { documents: { ok: 0, failed: 0 }, query: { ok: 0, failed: 0 } },
    documents: 0,
    pending: -1,
    standbyPending: -1,
    lexicalFallbacks: 0,
  };
  private readonly cache = new Map<string, number[]>();
  private windowStart = 0;
  private windowUsed = 0;
  private readonly lastLog = new Map<string, { at: number; suppressed: number }>();
  /** Requests under way: ended on close (a stalled endpoint never holds up a shutdown). */
  private readonly inFlight = new Set<http.ClientRequest>();

  constructor(
    readonly config: EmbeddingsConfig,
    private readonly log: Logger,
  ) {}

  get dimensions(): number {
    return this.config.dimensions;
  }

  get semanticRatio(): number {
    return this.config.semanticRatio;
  }

  status(): EmbeddingStats {
    return structuredClone(this.stats);
  }

  setPending(n: number, onStandbys: number): void {
    this.stats.pending = n;
    this.stats.standbyPending = onStandbys;
  }

  /** How many document texts may be embedded now (the rest of this minute's budget). */
  budget(now = Date.now()): number {
    if (now - this.windowStart >= 60_000) {
      this.windowStart = now;
      this.windowUsed = 0;
    }
    return Math.max(0, this.config.perMinute - this.windowUsed);
  }

  /** Ends the requests under way (they fail: documents stay queued, searches answer lexically). */
  close(): void {
    for (const req of this.inFlight) req.destroy(new EmbeddingError('shutting down'));
  }

  /** The cached vector of this document text, if any. */
  cached(text: string): number[] | undefined {
    return this.cache.get(textKey(text));
  }

  /** Vectors of document texts (in order); counts against the budget; throws when the endpoint fails. */
  async documents(texts: string[]): Promise<number[][]> {
    this.windowUsed += texts.length;
    try {
      const vectors = await this.request(texts, DOCUMENT_TIMEOUT_MS);
      this.stats.requests.documents.ok++;
      this.stats.documents += texts.length;
      texts.forEach((text, i) => this.remember(textKey(text), vectors[i]));
      return vectors;
    } catch (err) {
      this.stats.requests.documents.failed++;
      this.warn('documents', 'embeddings endpoint failed; documents wait for their vectors', err);
      throw err;
    }
  }

  /** The vector of a search's query, or null (endpoint failed or slower than EMBEDDINGS_QUERY_TIMEOUT_MS: the search is lexical). */
  async queryVector(text: string): Promise<number[] | null> {
    try {
      const [v] = await this.request([text], this.config.queryTimeoutMs);
      this.stats.requests.query.ok++;
      return v;
    } catch (err) {
      this.stats.requests.query.failed++;
      this.lexicalFallback('embeddings endpoint failed or was slow; searches answered lexically', err);
      return null;
    }
  }

  /** A search answered lexically although semantic search is on: counted, logged at most once a minute. */
  lexicalFallback(msg: string, err: unknown): void {
    this.stats.lexicalFallbacks++;
    this.warn('query', msg, err);
  }

  private async request(input: string[], timeoutMs: number): Promise<number[][]> {
    const answer = await postJson(this.config, { model: this.config.model, input }, timeoutMs, this.inFlight);
    return vectorsOf(answer, input.length, this.config.dimensions);
  }

  private remember(key: string, vector: number[]): void {
    if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, vector);
  }

  /** One line per kind per minute, with how many were left out since the last. */
  private warn(kind: string, msg: string, err: unknown): void {
    const now = Date.now();
    const last = this.lastLog.get(kind);
    if (last && now - last.at < LOG_EVERY_MS) {
      last.suppressed++;
      return;
    }
    this.lastLog.set(kind, { at: now, suppressed: 0 });
    // The endpoint's URL may carry credentials: only its origin is logged, and never the key.
    this.log.warn({
      msg,
      endpoint: new URL(this.config.url).host,
      err: String((err as Error)?.message ?? err),
      ...(last?.suppressed ? { since: `${last.suppressed} more in the last minute` } : {}),
    });
  }
}

const textKey = (text: string) => crypto.createHash('sha256').update(text).digest('base64url');

/** A vector as the engine returns it (`[…]`, or `{embeddings: [[…]]}`); null when there is none. */
export function vectorOf(v: unknown): number[] | null {
  if (Array.isArray(v)) return v.length > 0 && typeof v[0] === 'number' ? (v as number[]) : Array.isArray(v[0]) && v[0].length ? (v[0] as number[]) : null;
  const embeddings = (v as { embeddings?: unknown } | null)?.embeddings;
  return embeddings === undefined ? null : vectorOf(embeddings);
}
