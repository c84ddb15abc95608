import { contentChunks, readMarkdownRange, readStoredExchangeIndex } from '../data/content';
import type { Sql } from '../data/sql';
import { PAGES } from '../domain/pages';
import { invalid } from '../errors';
import type { Offload } from '../offload';
import type { Ctx } from './context';
import type { SessionRow } from '../domain/session-row';
import { decodeStoredIndex, ExchangeScanner, STORED_INDEX_FROM, type ExchangeEntry, type ExchangeIndex, type ScanState } from '../domain/exchanges';

/**
 * The paged read of a session's markdown, by exchange (docs/rest.md, "The paged read of a session": the reader
 * shows the first exchange of a 50 MB session without downloading all of it).
 *
 * An *exchange* of a SpecStory transcript is a user turn with the agent turns and tool output
 * after it, numbered from 1 as the SpecStory CLI numbers them (the file's header is the start of
 * exchange 1, not an exchange of its own); exchanges are contiguous byte ranges whose
 * concatenation is the markdown. The exact rules are with the scanner, src/domain/exchanges.ts.
 *
 * No exchange is longer than EXCHANGE_MAX_BYTES: a longer one is served in *pieces* (the next
 * piece starts at a line start where possible, else at a character boundary), each with its own
 * number and `continuation: true`, so that one page is bounded and the browser renders a bounded
 * amount at a time.
 *
 * The index of a version (offsets, sizes, titles) is computed once from the stored chunks, read
 * one 1 MiB chunk at a time, and kept in a small in-process cache keyed by the session's content
 * digest. With the service's worker pool (src/offload) the chunks are scanned there, SCAN_SEGMENT
 * bytes per task, the scanner's state going along (the first open of a 50 MB session
 * must not hold the event loop); without it, here, yielding to the event loop every SCAN_SLICE; a page then reads only
 * the byte range of its exchanges (`SUBSTRING` of the chunk rows that hold it). The scanner
 * itself is pure: src/domain/exchanges.ts.
 */

/** A page with content carries at most this many bytes of markdown (at least one exchange). */
export const PAGE_CONTENT_BYTES = 1024 * 1024;
/** Bytes scanned between two turns of the event loop (scanning on the event loop). */
const SCAN_SLICE = 256 * 1024;
/** Bytes scanned per worker-pool task (the memory a build holds at once, besides its index). */
export const SCAN_SEGMENT = 4 * 1024 * 1024;
/** Indexes kept per process: at most this many versions… */
const CACHE_ENTRIES = 64;
/** …holding at most this many exchanges in all (~200 bytes each: ~40 MB). */
const CACHE_EXCHANGES = 200_000;

/**
 * The index of one version of a session's markdown, read through `db` (a snapshot); scanned on
 * `offload`'s threads when given (it scans small inputs inline).
 */
async function buildIndex(db: Sql, projectId: string, sessionId: string, markdownSize: number, offload?: Offload): Promise<ExchangeIndex> {
  // Stored at upload for large markdown (and written with it, so of this version); smaller
  // markdown never has one, so it is not asked for.
  if (markdownSize >= STORED_INDEX_FROM) {
    const stored = await readStoredExchangeIndex(db, projectId, sessionId);
    const decoded = stored && decodeStoredIndex(stored, markdownSize);
    if (decoded) return decoded;
  }
  if (offload) {
    // Entries the scan is done with stay here; only the last one (it may still change) goes along.
    const done: ScanState['entries'] = [];
    let state: ScanState | null = null;
    const scan = async (segment: Buffer[]) => {
      if (state) done.push(...state.entries.splice(0, state.entries.length - 1));
      state = await offload.exchangeScan(state, segment);
    };
    let segment: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of contentChunks(db, projectId, sessionId, 'markdown')) {
      segment.push(chunk);
      bytes += chunk.length;
      if (bytes >= SCAN_SEGMENT) {
        await scan(segment);
        segment = [];
        bytes = 0;
      }
    }
    if (segment.length || !state) await scan(segment);
    const last: ScanState = state!;
    return ExchangeScanner.resume({ ...last, entries: done.concat(last.entries) }).finish();
  }
  const scanner = new ExchangeScanner();
  for await (const chunk of contentChunks(db, projectId, sessionId, 'markdown')) {
    // A quarter of a chunk at a time, yielding in between: the event loop stays free.
    for (let off = 0; off < chunk.length; off += SCAN_SLICE) {
      scanner.feed(chunk.subarray(off, off + SCAN_SLICE));
      await new Promise((r) => setImmediate(r));
    }
  }
  return scanner.finish();
}

const cache = new Map<string, Promise<ExchangeIndex>>();
/** Exchanges held by each built index of the cache. */
const held = new Map<string, number>();
let heldTotal = 0;

function forget(key: string): void {
  cache.delete(key);
  heldTotal -= held.get(key) ?? 0;
  held.delete(key);
}

/** Least recently used first, until both bounds hold (the newest entry always stays). */
function evict(): void {
  for (const key of cache.keys()) {
    if (cache.size <= CACHE_ENTRIES && heldTotal <= CACHE_EXCHANGES) return;
    if (cache.size === 1) return;
    forget(key);
  }
}

/**
 * The exchange index of `row`'s version (its content digest), computed once per process. Read
 * through the same snapshot as the row, so index and row are of one version. Concurrent readers
 * of a version share one build; if that build fails for its own reader (its client went away and
 * its snapshot was released), the others build it again on their own snapshot.
 */
export async function exchangeIndexOf(
  db: Sql,
  row: Pick<SessionRow, 'projectId' | 'id' | 'contentDigest' | 'markdownSize'>,
  offload?: Offload,
): Promise<ExchangeIndex> {
  const key = `${row.projectId}\0${row.id}\0${row.contentDigest}`;
  const shared = cache.get(key);
  if (shared) {
    // Most recently used last (Map order is insertion order).
    cache.delete(key);
    cache.set(key, shared);
    try {
      return await shared;
    } catch {
      /* built on another request's snapshot, which failed: build on ours below */
    }
  }
  const p = buildIndex(db, row.projectId, row.id, row.markdownSize, offload);
  forget(key);
  cache.set(key, p);
  p.then(
    (index) => {
      if (cache.get(key) !== p) return;
      held.set(key, index.entries.length);
      heldTotal += index.entries.length;
      evict();
    },
    () => {
      if (cache.get(key) === p) forget(key);
    },
  );
  evict();
  return p;
}

/** True when the index of `row`'s version is cached (a page costs only its own bytes). */
export function isIndexCached(row: Pick<SessionRow, 'projectId' | 'id' | 'contentDigest'>): boolean {
  return cache.has(`${row.projectId}\0${row.id}\0${row.contentDigest}`);
}

export interface ExchangeItem {
  number: number;
  title: string;
  start: number;
  size: number;
  continuation: boolean;
  /** Present when content was asked for. */
  markdown?: string;
}

export interface ExchangePage {
  /** Number of exchanges of the session. */
  total: number;
  offset: number;
  exchanges: ExchangeItem[];
  /** Where the next page starts, or null at the end. */
  nextOffset: number | null;
}

/**
 * One page of `row`'s exchanges, from `offset` (0-based: exchange number offset + 1), at most
 * `limit` of them; with content, also at most PAGE_CONTENT_BYTES of markdown (always at least one
 * exchange). `row` was read by the caller (the access rule applied) through `ctx`'s reads, which
 * are the snapshot it was read on where one was taken; the service's worker pool scans a version
 * not indexed yet off the event loop.
 */
export async function exchangePage(
  ctx: Ctx,
  row: Pick<SessionRow, 'projectId' | 'id' | 'contentDigest' | 'markdownSize'>,
  args: { offset: number; limit: number; content: boolean },
): Promise<ExchangePage> {
  // The doors parse these within their documented ranges; a caller of its own (MCP, shares) that
  // passes an offset below 0 or a limit below 1 is refused in the same words, never answered
  // with a broken page. Larger limits stay theirs to choose.
  const { exchangeOffset: o, exchanges: l } = PAGES;
  if (!Number.isInteger(args.offset) || args.offset < o.min) throw invalid(`Invalid value for offset: must be an integer between ${o.min} and ${o.max}`);
  if (!Number.isInteger(args.limit) || args.limit < l.min) throw invalid(`Invalid value for limit: must be an integer between ${l.min} and ${l.max}`);
  const db = ctx.deps.db.reads;
  const index = await exchangeIndexOf(db, row, ctx.deps.offload);
  const all = index.entries;
  const picked: ExchangeEntry[] = [];
  let bytes = 0;
  for (let i = args.offset; i < all.length && picked.length < args.limit; i++) {
    if (args.content && picked.length > 0 && bytes + all[i].size > PAGE_CONTENT_BYTES) break;
    picked.push(all[i]);
    bytes += all[i].size;
  }
  const exchanges: ExchangeItem[] = picked.map((e) => ({ ...e }));
  if (args.content && picked.length > 0) {
    const start = picked[0].start;
    const end = picked[picked.length - 1].start + picked[picked.length - 1].size;
    const buf = await readMarkdownRange(db, row.projectId, row.id, start, end);
    for (const e of exchanges) e.markdown = buf.subarray(e.start - start, e.start - start + e.size).toString('utf8');
  }
  const after = args.offset + picked.length;
  return { total: all.length, offset: args.offset, exchanges, nextOffset: after < all.length ? after : null };
}
