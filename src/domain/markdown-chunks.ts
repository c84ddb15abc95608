/**
 * Markdown cut into contiguous chunks of about 1.5 KB for the fragment documents of a large
 * session (src/domain/search-documents.ts): cuts fall at headings and thematic breaks outside code
 * fences (exchanges and sections of a transcript), then at paragraphs, lines and spaces.
 */

/** A chunk grows up to this many UTF-16 units before a boundary closes it. */
const CHUNK_TARGET = 1500;
/** No chunk is longer than this. */
export const CHUNK_MAX = 2000;

const FENCE_RE = /^ {0,3}(```|~~~)/;
/** A heading or a thematic break starts a new block: exchanges and sections of a transcript. */
const BOUNDARY_RE = /^ {0,3}(#{1,6}(\s|$)|(-{3,}|\*{3,}|_{3,})\s*$)/;

/** Where to cut `text` (length > max) at or before `max`: paragraph, line, space, else hard. */
function cutPoint(text: string, max: number): number {
  const min = Math.floor(max / 2);
  for (const sep of ['\n\n', '\n', ' ']) {
    const at = text.lastIndexOf(sep, max - sep.length);
    if (at >= min) return at + sep.length;
  }
  let at = max;
  // Never split a surrogate pair.
  const code = text.charCodeAt(at - 1);
  if (code >= 0xd800 && code <= 0xdbff) at -= 1;
  return at;
}

function* splitLong(text: string, max: number): Generator<string> {
  let rest = text;
  while (rest.length > max) {
    const at = cutPoint(rest, max);
    yield rest.slice(0, at);
    rest = rest.slice(at);
  }
  if (rest) yield rest;
}

/** Whether the line [pos, end) begins, after at most 3 spaces, with a character of a fence, heading or break. */
function mayOpenBlock(markdown: string, pos: number, end: number): boolean {
  let at = pos;
  while (at < end && at < pos + 3 && markdown.charCodeAt(at) === 0x20) at++;
  const c = markdown.charCodeAt(at);
  // # - * _ ` ~
  return at < end && (c === 0x23 || c === 0x2d || c === 0x2a || c === 0x5f || c === 0x60 || c === 0x7e);
}

/** Blocks of the markdown, each starting at a heading or break outside code fences. */
function* blocksOf(markdown: string): Generator<string> {
  let start = 0;
  let inFence: string | null = null;
  let pos = 0;
  while (pos < markdown.length) {
    let end = markdown.indexOf('\n', pos);
    end = end === -1 ? markdown.length : end + 1;
    // Most lines can be neither a fence nor a boundary: both begin, after at most 3 spaces, with
    // one of # - * _ ` ~ (FENCE_RE, BOUNDARY_RE). Those are passed over without a slice.
    if (!mayOpenBlock(markdown, pos, end)) {
      pos = end;
      continue;
    }
    // Look at the start of the line only: very long lines (minified JSON) stay cheap.
    const head = markdown.slice(pos, Math.min(end, pos + 16));
    const fence = FENCE_RE.exec(head);
    if (fence) {
      if (!inFence) inFence = fence[1];
      else if (fence[1] === inFence) inFence = null;
    } else if (!inFence && pos > start && BOUNDARY_RE.test(markdown.slice(pos, Math.min(end, pos + 64)).replace(/\n$/, ''))) {
      yield markdown.slice(start, pos);
      start = pos;
    }
    pos = end;
  }
  if (start < markdown.length) yield markdown.slice(start);
}

/**
 * Splits markdown into contiguous chunks of about CHUNK_TARGET (never over CHUNK_MAX) units,
 * preferring heading/exchange boundaries, then paragraphs, lines and spaces. The chunks
 * concatenate back to the input exactly.
 */
export function chunkMarkdown(markdown: string, target = CHUNK_TARGET, max = CHUNK_MAX): string[] {
  const chunks: string[] = [];
  let current = '';
  const flush = () => {
    if (current) chunks.push(current);
    current = '';
  };
  for (const block of blocksOf(markdown)) {
    if (current.length + block.length <= target) {
      current += block;
      continue;
    }
    flush();
    if (block.length <= max) {
      current = block;
      continue;
    }
    for (const piece of splitLong(block, max)) {
      if (current.length + piece.length <= target) current += piece;
      else {
        flush();
        current = piece;
      }
    }
  }
  flush();
  return chunks;
}

/**
 * The non-blank fragments of a markdown, numbered from 1, with their offsets in it: `start` in
 * UTF-16 units, `byteStart` in bytes of the UTF-8 encoding (what the reader's exchanges count).
 */
export function fragmentsOf(markdown: string): Array<{ chunk: number; start: number; byteStart: number; content: string }> {
  const out: Array<{ chunk: number; start: number; byteStart: number; content: string }> = [];
  let start = 0;
  let byteStart = 0;
  for (const content of chunkMarkdown(markdown)) {
    if (/\S/.test(content)) out.push({ chunk: out.length + 1, start, byteStart, content });
    start += content.length;
    byteStart += Buffer.byteLength(content, 'utf8');
  }
  return out;
}
