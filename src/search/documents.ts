import crypto from 'node:crypto';

/**
 * From a session row and its markdown to search documents: one document per chunk of ~1.5 KB.
 *
 * Why chunks: the whole markdown must stay searchable (a term only at the end of a 5 MB session
 * is found), and snippet cost grows with the size of the attribute Meilisearch crops. Chunks are
 * collapsed back to sessions at query time with `distinct: sessionKey`.
 *
 * Chunks are contiguous slices of the markdown (their concatenation is the markdown), so every
 * snippet cut from a chunk is a literal excerpt of the session.
 */

/** A chunk grows up to this many UTF-16 units before a boundary closes it. */
export const CHUNK_TARGET = 1500;
/** No chunk is longer than this. */
export const CHUNK_MAX = 2000;

export interface SessionDocument {
  /** Stable per (session, chunk): an update with as many chunks replaces documents in place. */
  id: string;
  sessionKey: string;
  userId: string;
  projectId: string;
  sessionId: string;
  /** 1-based position of the chunk in the markdown. */
  chunk: number;
  name: string;
  tags: string[];
  llmModels: string[];
  gitBranches: string[];
  /** Lower-cased: compared case-insensitively. */
  clientName: string | null;
  /** Lower-cased: compared case-insensitively. */
  agentName: string | null;
  deviceId: string | null;
  /** Epoch milliseconds. */
  createdAt: number;
  hasGitBranches: boolean;
  content: string;
  /** Digest of everything above: an unchanged chunk is not sent again (growing sessions re-send only their tail). */
  hash: string;
  /** Database time (epoch ms) of the push: a full rebuild removes what it did not refresh. */
  syncedAt: number;
}

/** `hash` of a tombstone: a fragment a session no longer has, emptied until it is deleted. */
export const TOMBSTONE = 'tombstone';

/**
 * A fragment the session no longer has, emptied: with nothing searchable it matches no query.
 * Writing it in the same engine task as the session's new fragments makes an update one indexing
 * batch instead of two (add, then delete); tombstones are deleted later, off the write path.
 */
export function tombstoneOf(id: string, s: { projectId: string; id: string; userId: string }, syncedAt: number): SessionDocument {
  return {
    id,
    sessionKey: sessionKeyOf(s.projectId, s.id),
    userId: s.userId,
    projectId: s.projectId,
    sessionId: s.id,
    chunk: 0,
    name: '',
    tags: [],
    llmModels: [],
    gitBranches: [],
    clientName: null,
    agentName: null,
    deviceId: null,
    createdAt: 0,
    hasGitBranches: false,
    content: '',
    hash: TOMBSTONE,
    syncedAt,
  };
}

/** The session columns a document needs. */
export interface IndexableSession {
  projectId: string;
  id: string;
  userId: string;
  name: string;
  createdAt: Date;
  clientName: string | null;
  agentName: string | null;
  deviceId: string | null;
  metadataJson: string;
  hasGitBranches: boolean | number;
}

export const sessionKeyOf = (projectId: string, sessionId: string) => `${projectId}/${sessionId}`;

/** Document ids allow [A-Za-z0-9_-]: base64url of the session key is injective and allowed. */
export const documentIdOf = (projectId: string, sessionId: string, chunk: number) =>
  `${Buffer.from(sessionKeyOf(projectId, sessionId), 'utf8').toString('base64url')}-${chunk}`;

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

/** Blocks of the markdown, each starting at a heading or break outside code fences. */
function* blocksOf(markdown: string): Generator<string> {
  let start = 0;
  let inFence: string | null = null;
  let pos = 0;
  while (pos < markdown.length) {
    let end = markdown.indexOf('\n', pos);
    end = end === -1 ? markdown.length : end + 1;
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

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** The array-valued metadata kept in sessions.metadataJson ({llmModels, tags, gitBranches, extra}). */
function labelsOf(metadataJson: string): { llmModels: string[]; tags: string[]; gitBranches: string[] } {
  let m: any = {};
  try {
    m = JSON.parse(metadataJson) ?? {};
  } catch {
    m = {};
  }
  return { llmModels: strings(m.llmModels), tags: strings(m.tags), gitBranches: strings(m.gitBranches) };
}

/** The documents of one session: one per non-blank chunk, at least one (name and tags). */
export function toDocuments(row: IndexableSession, markdown: string, syncedAt: number): SessionDocument[] {
  const meta = labelsOf(row.metadataJson);
  const base = {
    sessionKey: sessionKeyOf(row.projectId, row.id),
    userId: row.userId,
    projectId: row.projectId,
    sessionId: row.id,
    name: row.name,
    tags: meta.tags,
    llmModels: meta.llmModels,
    gitBranches: meta.gitBranches,
    clientName: row.clientName?.toLowerCase() ?? null,
    agentName: row.agentName?.toLowerCase() ?? null,
    deviceId: row.deviceId,
    createdAt: row.createdAt.getTime(),
    hasGitBranches: Boolean(row.hasGitBranches),
  };
  const baseDigest = crypto.createHash('sha256').update(JSON.stringify(base));
  const contents = chunkMarkdown(markdown).filter((c) => /\S/.test(c));
  if (contents.length === 0) contents.push('');
  return contents.map((content, i) => ({
    id: documentIdOf(row.projectId, row.id, i + 1),
    chunk: i + 1,
    ...base,
    content,
    hash: baseDigest.copy().update(`\0${i + 1}\0`).update(content).digest('base64url').slice(0, 22),
    syncedAt,
  }));
}
