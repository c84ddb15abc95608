/**
 * Exchanges of a SpecStory transcript (docs/rest.md, "The paged read of a session"), as pure rules: the scanner
 * that finds them in the markdown's bytes, fed in any chunking, and the index it builds. The paged
 * read that uses it is src/services/exchanges.ts.
 *
 * An *exchange* is a user turn (`_**User**_`, `_**User (…)**_` on a line of its own, outside code
 * fences) with everything after it up to the next user turn: the agent turns (`_**Agent (…)**_`,
 * `_**Assistant**_`) and their tool output. What comes before the first user turn (the title, the
 * session's header; or agent turns of a resumed session) is exchange 1 unless it is blank. A
 * markdown without user turns is one exchange. Exchanges are numbered from 1 in the order of the
 * markdown; they are contiguous byte ranges whose concatenation is the markdown. No exchange is
 * longer than EXCHANGE_MAX_BYTES: a longer one comes in pieces (the next piece starts at a line
 * start where possible, else at a character boundary), each with its own number and
 * `continuation: true`.
 */

/** An exchange longer than this is served in pieces. */
export const EXCHANGE_MAX_BYTES = 256 * 1024;
/** Titles are cut to this many characters. */
export const TITLE_MAX = 120;

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
    const headText = buf
      .subarray(from, Math.min(to, from + HEAD_BYTES))
      .toString('utf8')
      .replace(/\r?\n$/, '');
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
 * Markdown of at least this many bytes has its exchange index stored with it at upload (computed
 * where the upload is prepared, a worker thread for a large one), so that no open of it reads or
 * scans the whole markdown. A smaller one is scanned when first opened (about a millisecond).
 */
export const STORED_INDEX_FROM = 1024 * 1024;

/** Format of a stored index: `{v: 1, size, e: [[start, size, title, continuation 0|1], …]}`, numbered from 1 in order. */
interface StoredIndex {
  v: 1;
  size: number;
  e: Array<[number, number, string, 0 | 1]>;
}

/**
 * A stored index is at most this large, and at most an eighth of its markdown: it is read and
 * parsed on the event loop at open (a real transcript's is ~1.5% of it; markdown of millions of
 * one-line turns would make one larger than itself, and is scanned on the worker pool instead).
 */
export const STORED_INDEX_MAX = 4 * 1024 * 1024;

/** The index of `markdown` in its stored form, or null when there is none to store (see above). */
export function storedIndexOf(markdown: Buffer): Buffer | null {
  if (markdown.length < STORED_INDEX_FROM) return null;
  const scanner = new ExchangeScanner();
  scanner.feed(markdown);
  const index = scanner.finish();
  const stored: StoredIndex = { v: 1, size: index.markdownSize, e: index.entries.map((x) => [x.start, x.size, x.title, x.continuation ? 1 : 0]) };
  const bytes = Buffer.from(JSON.stringify(stored), 'utf8');
  return bytes.length <= Math.min(STORED_INDEX_MAX, markdown.length / 8) ? bytes : null;
}

/**
 * A stored index read back; null when it is not one of `markdownSize` bytes of markdown, or not
 * contiguous (then the caller scans the markdown instead).
 */
export function decodeStoredIndex(bytes: Buffer, markdownSize: number): ExchangeIndex | null {
  let stored: StoredIndex;
  try {
    stored = JSON.parse(bytes.toString('utf8')) as StoredIndex;
  } catch {
    return null;
  }
  if (stored?.v !== 1 || stored.size !== markdownSize || !Array.isArray(stored.e)) return null;
  let at = 0;
  const entries: ExchangeEntry[] = [];
  for (const [start, size, title, continuation] of stored.e) {
    if (start !== at || !(size >= 0) || typeof title !== 'string') return null;
    entries.push({ number: entries.length + 1, start, size, title, continuation: continuation === 1 });
    at = start + size;
  }
  return at === markdownSize ? { entries, markdownSize } : null;
}
