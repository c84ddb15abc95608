import { invalid } from '../errors';
import { contentChunks, readMarkdownRange } from '../data/content';
import type { Sql } from '../data/sql';
import type { Offload } from '../offload';
import type { Ctx } from './context';
import type { SessionRow } from './sessions';

/**
 * The paged read of a session's markdown, by exchange (contract §10 "Large sessions": the reader
 * shows the first exchange of a 50 MB session without downloading all of it).
 *
 * An *exchange* of a SpecStory transcript is a user turn (`_**User**_`, `_**User (…)**_` on a line
 * of its own, outside code fences) with everything after it up to the next user turn: the agent
 * turns (`_**Agent (…)**_`, `_**Assistant**_`) and their tool output. What comes before the first
 * user turn (the title, the session's header; or agent turns of a resumed session) is exchange 1
 * unless it is blank. A markdown without user turns is one exchange. Exchanges are numbered from 1
 * in the order of the markdown; they are contiguous byte ranges whose concatenation is the markdown.
 *
 * No exchange is longer than EXCHANGE_MAX_BYTES: a longer one is served in *pieces* (the next
 * piece starts at a line start where possible, else at a character boundary), each with its own
 * number and `continuation: true`, so that one page is bounded and the browser renders a bounded
 * amount at a time.
 *
 * The index of a version (offsets, sizes, titles) is computed once from the stored chunks, read
 * one 1 MiB chunk at a time, and kept in a small in-process cache keyed by the session's content
 * digest. With the service's worker pool (src/offload) the chunks are scanned there, SCAN_SEGMENT
 * bytes per task, the scanner's state going along (contract §16: the first open of a 50 MB session
 * must not hold the event loop); without it, here, yielding to the event loop every SCAN_SLICE; a page then reads only
 * the byte range of its exchanges (`SUBSTRING` of the chunk rows that hold it).
 */

/** An exchange longer than this is served in pieces. */
export const EXCHANGE_MAX_BYTES = 256 * 1024;
/** A page with content carries at most this many bytes of markdown (at least one exchange). */
export const PAGE_CONTENT_BYTES = 1024 * 1024;
/** Titles are cut to this many characters. */
export const TITLE_MAX = 120;
/** Bytes scanned between two turns of the event loop (scanning on the event loop). */
const SCAN_SLICE = 256 * 1024;
/** Bytes scanned per worker-pool task (the memory a build holds at once, besides its index). */
export const SCAN_SEGMENT = 4 * 1024 * 1024;
/** Indexes kept per process: at most this many versions… */
const CACHE_ENTRIES = 64;
/** …holding at most this many exchanges in all (~200 bytes each: ~40 MB). */
const CACHE_EXCHANGES = 200_000;

export interface ExchangeEntry {
  /** 1-based. */
  number: number;
  /** Byte offset in the markdown. */
  start: number;
  /** Bytes. */
  size: number;
  title: string;
  /** A later piece of an exchange longer than EXCHANGE_MAX_BYTES. */
  continuation: boolean;
}

export interface ExchangeIndex {
  entries: ExchangeEntry[];
  markdownSize: number;
}

const NL = 0x0a;
const HEAD_BYTES = 512;
const USER_RE = /^ {0,3}_\*\*(User|Human)\b.*\*\*_\s*$/;
const TURN_RE = /^ {0,3}_\*\*(User|Human|Agent|Assistant)\b.*\*\*_\s*$/;
const FENCE_RE = /^ {0,3}(`{3,}|~{3,})/;

/** A line's text for a title: markdown marks stripped, spaces collapsed, cut to TITLE_MAX. */
function titleText(line: string): string {
  const t = line
    .replace(/^ {0,3}(#{1,6}\s+|>\s*|[-*+]\s+|\d+[.)]\s+)/, '')
    .replace(/[*_`~]+/g, '')
    .replace(/<[^>]*>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  const chars = [...t];
  return chars.length > TITLE_MAX ? `${chars.slice(0, TITLE_MAX - 1).join('')}…` : t;
}

interface RawEntry {
  start: number;
  title: string;
  continuation: boolean;
  titled: boolean;
  blank: boolean;
}

/** A scanner's whole state as plain data: a scan can go on in another thread (structured clone). */
export interface ScanState {
  entries: RawEntry[];
  carry: Uint8Array;
  carryStart: number;
  fence: string | null;
  total: number;
  sawUser: boolean;
}

/** Builds the index from the markdown's bytes, fed in order (any chunking). */
export class ExchangeScanner {
  private entries: RawEntry[] = [];
  private carry: Buffer = Buffer.alloc(0);
  private carryStart = 0;
  private fence: string | null = null;
  private total = 0;
  private sawUser = false;

  constructor() {
    this.entries.push({ start: 0, title: '', continuation: false, titled: false, blank: true });
  }

  /** A scanner that goes on where `state()` of another one left off. */
  static resume(state: ScanState): ExchangeScanner {
    const s = new ExchangeScanner();
    s.entries = state.entries;
    const c = state.carry;
    s.carry = Buffer.isBuffer(c) ? c : Buffer.from(c.buffer, c.byteOffset, c.byteLength);
    s.carryStart = state.carryStart;
    s.fence = state.fence;
    s.total = state.total;
    s.sawUser = state.sawUser;
    return s;
  }

  /** What resume() needs (before finish()). */
  state(): ScanState {
    return { entries: this.entries, carry: this.carry, carryStart: this.carryStart, fence: this.fence, total: this.total, sawUser: this.sawUser };
  }

  feed(chunk: Buffer): void {
    const buf = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    const base = this.carryStart;
    let pos = 0;
    for (;;) {
      const nl = buf.indexOf(NL, pos);
      if (nl === -1) break;
      this.line(buf, base, pos, nl + 1);
      pos = nl + 1;
    }
    this.carry = Buffer.from(buf.subarray(pos));
    this.carryStart = base + pos;
    this.total = base + buf.length;
  }

  finish(): ExchangeIndex {
    if (this.carry.length) this.line(this.carry, this.carryStart, 0, this.carry.length);
    this.carry = Buffer.alloc(0);
    const raw = this.entries;
    const entries: ExchangeEntry[] = raw.map((e, i) => ({
      number: i + 1,
      start: e.start,
      size: (i + 1 < raw.length ? raw[i + 1].start : this.total) - e.start,
      title: e.title || (e.continuation ? '' : i === 0 && !this.sawUser ? 'Session' : 'Exchange'),
      continuation: e.continuation,
    }));
    // An empty markdown still has its one (empty) exchange; a trailing empty piece has none.
    const kept = entries.filter((e, i) => e.size > 0 || i === 0);
    kept.forEach((e, i) => (e.number = i + 1));
    return { entries: kept, markdownSize: this.total };
  }

  /** One line [from, to) of `buf`, whose byte 0 is at markdown offset `base`. */
  private line(buf: Buffer, base: number, from: number, to: number): void {
    // Fast path, most lines: one that cannot open or close a fence or be a turn header (those
    // start with `_`, a backtick, `~` or a space), in an exchange that already has its title.
    const c0 = buf[from];
    const last = this.entries[this.entries.length - 1];
    if (c0 !== 0x5f && c0 !== 0x60 && c0 !== 0x7e && c0 !== 0x20 && last.titled && !last.blank) {
      this.split(buf, base, from, to);
      return;
    }
    const headText = buf.subarray(from, Math.min(to, from + HEAD_BYTES)).toString('utf8').replace(/\r?\n$/, '');
    const lineStart = base + from;
    let current = this.entries[this.entries.length - 1];
    const fence = FENCE_RE.exec(headText);
    if (fence) {
      const mark = fence[1];
      if (!this.fence) this.fence = mark;
      else if (mark[0] === this.fence[0] && mark.length >= this.fence.length && headText.trim() === mark) this.fence = null;
    } else if (!this.fence && USER_RE.test(headText)) {
      this.sawUser = true;
      if (current.blank) {
        // Only blank lines so far: this user turn begins the current exchange.
        current.titled = false;
        current.title = '';
      } else {
        current = { start: lineStart, title: '', continuation: false, titled: false, blank: false };
        this.entries.push(current);
      }
      current.blank = false;
      this.split(buf, base, from, to);
      return;
    }
    const isBlank = headText.trim() === '';
    if (!isBlank) {
      current.blank = false;
      // An agent turn before any prompt text: the prompt was empty, the title stays the default.
      if (!this.fence && !fence && TURN_RE.test(headText)) current.titled = true;
      if (!current.titled && !current.continuation && !fence) {
        const t = titleText(headText);
        if (t) {
          current.title = t;
          current.titled = true;
        }
      }
    }
    this.split(buf, base, from, to);
  }

  /**
   * Keeps every exchange within EXCHANGE_MAX_BYTES: a line that would take the current piece
   * over it starts a new piece; a single line longer than that is cut at character boundaries.
   */
  private split(buf: Buffer, base: number, from: number, to: number): void {
    let current = this.entries[this.entries.length - 1];
    const lineStart = base + from;
    const lineEnd = base + to;
    if (lineEnd - current.start <= EXCHANGE_MAX_BYTES) return;
    if (lineStart > current.start) {
      current = this.continueAt(current, lineStart);
    }
    while (lineEnd - current.start > EXCHANGE_MAX_BYTES) {
      let cut = current.start + EXCHANGE_MAX_BYTES;
      // Back up to the first byte of a UTF-8 character.
      while (cut > current.start + 1 && (buf[cut - base] & 0xc0) === 0x80) cut--;
      current = this.continueAt(current, cut);
    }
  }

  private continueAt(from: { title: string; continuation: boolean }, start: number) {
    const title = from.title || 'Exchange';
    const piece = { start, title: from.continuation ? from.title : `${title} (continued)`, continuation: true, titled: true, blank: false };
    this.entries.push(piece);
    return piece;
  }
}

/**
 * The index of one version of a session's markdown, read through `db` (a snapshot); scanned on
 * `offload`'s threads when given (it scans small inputs inline).
 */
async function buildIndex(db: Sql, projectId: string, sessionId: string, offload?: Offload): Promise<ExchangeIndex> {
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
    // A quarter of a chunk at a time, yielding in between: the event loop stays free (§16).
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
export async function exchangeIndexOf(db: Sql, row: Pick<SessionRow, 'projectId' | 'id' | 'contentDigest'>, offload?: Offload): Promise<ExchangeIndex> {
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
  const p = buildIndex(db, row.projectId, row.id, offload);
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
 * exchange). `db` must be the snapshot `row` was read on; `offload` (the service's worker pool)
 * scans a version not indexed yet off the event loop.
 */
export async function exchangePage(
  db: Sql,
  row: Pick<SessionRow, 'projectId' | 'id' | 'contentDigest'>,
  args: { offset: number; limit: number; content: boolean; offload?: Offload },
): Promise<ExchangePage> {
  const index = await exchangeIndexOf(db, row, args.offload);
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

export type { Ctx };
