import crypto from 'node:crypto';
import { WHOLE_MAX } from './index-work';
import { breaksIn, exchangeAt, exchangeStartsOf, outlineOf } from './document-outline';
import { fragmentsOf } from './markdown-chunks';
import { formsOf } from './word-forms';
import { engineText } from './engine-text';
import { keptApart } from './kept-apart';

/**
 * From a session row and its markdown to search documents.
 *
 * Every session has one *session document* (chunk 0) on which a query must match as a whole: every
 * query word has to be somewhere in the session, not in one piece of it.
 * - A small session (up to WHOLE_MAX characters, and few enough words for the engine's 65,535
 *   positions per attribute) is that one document: its whole markdown is its `content`, so
 *   phrases, proximity and snippets work on the real text.
 * - A larger session's session document holds, instead of the text, the distinct words of the
 *   whole markdown (`terms*`, in order of first appearance; Meilisearch would ignore words past
 *   65,535 positions of one attribute). Its text goes to *fragment documents* (chunks 1…n of
 *   ~1.5 KB): they give snippets and matching exchanges, and a quoted phrase matches in them.
 *
 * Searches collapse documents per session with `distinct: sessionDigest`. Chunks are contiguous
 * slices of the markdown (their concatenation is the markdown), so every snippet cut from one is
 * a literal excerpt of the session.
 */

/** Sessions up to this many UTF-16 units are indexed whole, as one document (one constant with the outbox's upsert op). */
/** Estimated engine positions a whole document may use (the engine stops at 65,535). */
const POSITION_BUDGET = 60_000;
/** Attributes holding a large session's distinct words, and how many words each takes. */
export const TERM_ATTRIBUTES = ['terms', 'terms2', 'terms3', 'terms4'] as const;
const TERMS_PER_ATTRIBUTE = 30_000;
/** Forms a document holds at most (word-forms.ts; the engine reads 65,535 positions of an attribute). */
const FORMS_MAX = 60_000;

export interface SessionDocument {
  /** Stable per (session, chunk): an update with as many chunks replaces documents in place. */
  id: string;
  /** `projectId/sessionId`, exact (shown and compared in code; never in an engine filter, see keyOf). */
  sessionKey: string;
  /** keyOf(sessionKey): what filters, retirements and `distinct` use. */
  sessionDigest: string;
  /** keyOf(projectId): what a project's deletion uses (always with userId). */
  projectDigest: string;
  userId: string;
  projectId: string;
  sessionId: string;
  /**
   * keyOf(uploadedBy): what the `uploaderIds` filter compares, so that the engine narrows (and
   * counts) exactly what the database does. Null for sessions stored before uploaders were recorded.
   */
  uploaderDigest: string | null;
  /** 0 for the session document; 1-based position of the fragment in the markdown otherwise. */
  chunk: number;
  /** Session document: how many fragment documents the session has (0: it is indexed whole). */
  chunks: number;
  /**
   * True on every document of a session indexed whole (its only one), false on every document of
   * a large session (session document and fragments). A search counts the first without
   * `distinct` (one document per session) and collapses only the second (adapter.ts).
   */
  whole: boolean;
  /** Name, tags and content are held as engineText (engine-text.ts): `<` and `>` swapped with `‹` and `›`. */
  name: string;
  tags: string[];
  llmModels: string[];
  gitBranches: string[];
  /**
   * keyOf of each tag, model, branch and the device: what the list filters compare, so that the
   * engine narrows (and counts) exactly what the database does, case included (`Tag` is not `tag`).
   */
  tagDigests: string[];
  modelDigests: string[];
  branchDigests: string[];
  deviceDigest: string | null;
  /** Lower-cased: compared case-insensitively. */
  clientName: string | null;
  /** Lower-cased: compared case-insensitively. */
  agentName: string | null;
  deviceId: string | null;
  /** Epoch milliseconds. */
  createdAt: number;
  hasGitBranches: boolean;
  /** sessions.contentDigest when pushed: a hit whose stored session changed since is stale. */
  contentDigest: string;
  /**
   * Recent index only: true on the documents of a session that the main index held no copy of
   * when they were written (a new session). A search leaves only the other sessions the recent
   * index holds out of the main index (adapter.ts); absent, a main copy may exist.
   */
  noMainCopy?: true;
  /** The whole markdown (small session), a fragment of it (chunk > 0), or empty. */
  content: string;
  /** Fragment document: byte offset of the fragment in the markdown. */
  start?: number;
  /** Fragment document: the exchange (reader's numbering, from 1) the fragment begins in. */
  exchange?: number;
  /** Fragment document: offsets (UTF-16 units, > 0) in `content` where a further exchange begins. */
  exchangeBreaks?: number[];
  /**
   * Session indexed whole: where its fragments and exchanges are (outlineOf), as JSON; stored, not
   * searched. A string, not an object: the engine hands a string back for less than a nested
   * value (a page of 10 hits retrieving it: 0.08–0.17 ms more at p50 as a string, 0.15–0.38 ms
   * as an object).
   */
  outline?: string;
  /**
   * Other forms of the document's words (word-forms.ts: stems that differ from the words, and
   * identifiers' parts' stems, marked), space-separated; only forms queries ask for them. Each
   * fragment of a large session holds those of its text.
   */
  forms?: string;
  /** Session document of a large session: the `forms` of its whole markdown (apart: fragments are searched in `forms`). */
  termForms?: string;
  /** Session document of a large session: its distinct words, spread over TERM_ATTRIBUTES. */
  terms?: string;
  terms2?: string;
  terms3?: string;
  terms4?: string;
  /** Digest of everything above: an unchanged chunk is not sent again (growing sessions re-send only their tail). */
  hash: string;
  /** Database time (epoch ms) of the push: a full rebuild removes what it did not refresh. */
  syncedAt: number;
}

/**
 * The engine's embedder (semantic search, docs/search.md): with it, every document pushed carries
 * `_vectors: {[EMBEDDER]: null}` (the engine requires the entry), and gets its vector later
 * (src/search/semantic/embedding-sweeper.ts).
 */
export const EMBEDDER = 'session_archive';

/** A document as pushed to an index with an embedder: no vector yet. */
export const withoutVector = <D extends object>(doc: D): D & { _vectors: Record<string, null> } => ({ ...doc, _vectors: { [EMBEDDER]: null } });

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
    sessionDigest: sessionDigestOf(s.projectId, s.id),
    projectDigest: keyOf(s.projectId),
    userId: s.userId,
    projectId: s.projectId,
    sessionId: s.id,
    uploaderDigest: null,
    chunk: -1,
    chunks: 0,
    whole: false,
    name: '',
    tags: [],
    llmModels: [],
    gitBranches: [],
    tagDigests: [],
    modelDigests: [],
    branchDigests: [],
    deviceDigest: null,
    clientName: null,
    agentName: null,
    deviceId: null,
    createdAt: 0,
    hasGitBranches: false,
    contentDigest: '',
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
  contentDigest: string;
  /** The user whose credential first created the session (null: stored before teams). */
  uploadedBy?: string | null;
}

export const sessionKeyOf = (projectId: string, sessionId: string) => `${projectId}/${sessionId}`;

/**
 * An exact key for engine filters. The engine compares filter strings without
 * case, while project ids are case-sensitive (`ACME-APP` and `acme-app` may be two users'):
 * lower-case hex of a SHA-256 has no case to lose, and is short (long facet strings are cut).
 * 20 hex digits (80 bits): every filter is also scoped by the owner's id, so a key only tells one
 * owner's projects, sessions, tags, … apart; each digit is stored once per document in the
 * document and again in the engine's filter databases.
 */
export const keyOf = (value: string) => crypto.createHash('sha256').update(value, 'utf8').digest('hex').slice(0, 20);
export const sessionDigestOf = (projectId: string, sessionId: string) => keyOf(sessionKeyOf(projectId, sessionId));

/** Document ids allow [A-Za-z0-9_-]: base64url of the session key is injective and allowed. */
export const documentIdOf = (projectId: string, sessionId: string, chunk: number) =>
  `${Buffer.from(sessionKeyOf(projectId, sessionId), 'utf8').toString('base64url')}-${chunk}`;

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** The array-valued metadata kept in sessions.metadataJson ({llmModels, tags, gitBranches, extra}). */
function labelsOf(metadataJson: string): { llmModels: string[]; tags: string[]; gitBranches: string[] } {
  let m: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(metadataJson);
    if (parsed && typeof parsed === 'object') m = parsed as Record<string, unknown>;
  } catch {
    m = {};
  }
  return { llmModels: strings(m.llmModels), tags: strings(m.tags), gitBranches: strings(m.gitBranches) };
}

/** A word as the index and the highlighter see it (global: reset lastIndex before exec loops). */
export const WORD_RE = /[\p{L}\p{N}\p{M}]+/gu;
/** Punctuation runs and line breaks: the engine may count a hard separator as 8 positions. */
const SEPARATOR_RE = /[^\p{L}\p{N}\p{M}\s]+|\n/gu;

const countMatches = (re: RegExp, text: string) => {
  let n = 0;
  re.lastIndex = 0;
  while (re.exec(text)) n++;
  return n;
};

/** True when the markdown can be indexed as one document without the engine dropping words. */
export function fitsWhole(markdown: string): boolean {
  if (markdown.length > WHOLE_MAX) return false;
  return countMatches(WORD_RE, markdown) + 8 * countMatches(SEPARATOR_RE, markdown) <= POSITION_BUDGET;
}

/**
 * The distinct words of the markdown (lower-cased, in order of first appearance), spread over
 * TERM_ATTRIBUTES, each kept apart from the next as far as the attribute's positions allow
 * (kept-apart.ts). Words past what the attributes hold (over 120,000 distinct words) are left to
 * the fragments: found when the rest of the query is in the same fragment.
 */
export function termsOf(markdown: string): Partial<Record<(typeof TERM_ATTRIBUTES)[number], string>> {
  const seen = new Set<string>();
  const limit = TERM_ATTRIBUTES.length * TERMS_PER_ATTRIBUTE;
  WORD_RE.lastIndex = 0;
  for (let m = WORD_RE.exec(markdown); m && seen.size < limit; m = WORD_RE.exec(markdown)) seen.add(m[0].toLowerCase());
  const words = [...seen];
  const out: Partial<Record<(typeof TERM_ATTRIBUTES)[number], string>> = {};
  TERM_ATTRIBUTES.forEach((attr, i) => {
    const slice = words.slice(i * TERMS_PER_ATTRIBUTE, (i + 1) * TERMS_PER_ATTRIBUTE);
    // Neighbours in this list are no neighbours in the text: kept apart (no word pairs).
    if (slice.length) out[attr] = keptApart(slice, slice.length);
  });
  return out;
}

/**
 * The documents of one session: its session document (chunk 0), plus one fragment document per
 * non-blank chunk when it is too large to be indexed whole.
 */
export function toDocuments(row: IndexableSession, markdown: string, syncedAt: number, opts: { noMainCopy?: boolean } = {}): SessionDocument[] {
  const meta = labelsOf(row.metadataJson);
  const whole = fitsWhole(markdown);
  const base = {
    whole,
    // In the digest below: a document whose flag changed is pushed again. Absent otherwise, so
    // that every other document's digest is what it was before the flag existed.
    ...(opts.noMainCopy ? { noMainCopy: true as const } : {}),
    sessionKey: sessionKeyOf(row.projectId, row.id),
    sessionDigest: sessionDigestOf(row.projectId, row.id),
    projectDigest: keyOf(row.projectId),
    userId: row.userId,
    projectId: row.projectId,
    sessionId: row.id,
    uploaderDigest: row.uploadedBy ? keyOf(row.uploadedBy) : null,
    // The searchable texts as the engine holds them (engine-text.ts).
    name: engineText(row.name),
    tags: meta.tags.map(engineText),
    llmModels: meta.llmModels,
    gitBranches: meta.gitBranches,
    tagDigests: meta.tags.map(keyOf),
    modelDigests: meta.llmModels.map(keyOf),
    branchDigests: meta.gitBranches.map(keyOf),
    deviceDigest: row.deviceId ? keyOf(row.deviceId) : null,
    clientName: row.clientName?.toLowerCase() ?? null,
    agentName: row.agentName?.toLowerCase() ?? null,
    deviceId: row.deviceId,
    createdAt: row.createdAt.getTime(),
    hasGitBranches: Boolean(row.hasGitBranches),
    contentDigest: row.contentDigest,
  };
  const baseDigest = crypto.createHash('sha256').update(JSON.stringify(base));
  const hashOf = (chunk: number, ...parts: string[]) => {
    const h = baseDigest.copy().update(`\0${chunk}\0`);
    for (const p of parts) h.update(p).update('\0');
    return h.digest('base64url').slice(0, 22);
  };
  const doc = (chunk: number, chunks: number, content: string, extra: Partial<SessionDocument> = {}, hash = hashOf(chunk, content)) => ({
    id: documentIdOf(row.projectId, row.id, chunk),
    chunk,
    chunks,
    ...base,
    content: engineText(content),
    ...extra,
    hash,
    syncedAt,
  });

  const labels = [row.name, ...meta.tags];
  if (whole) {
    const outline = JSON.stringify(outlineOf(markdown));
    const forms = formsOf([...labels, markdown], FORMS_MAX);
    // Tagged: a document holding the outline as an object (an earlier build) is pushed again.
    return [doc(0, 0, markdown, { outline, forms }, hashOf(0, markdown, 'outline-json', outline, 'forms', forms))];
  }
  const fragments = fragmentsOf(markdown);
  const terms = termsOf(markdown);
  const forms = formsOf([...labels, markdown], FORMS_MAX);
  const session = doc(
    0,
    fragments.length,
    '',
    { ...terms, termForms: forms },
    hashOf(0, `${fragments.length}`, ...TERM_ATTRIBUTES.map((a) => terms[a] ?? ''), 'forms', forms),
  );
  const starts = exchangeStartsOf(markdown);
  return [
    session,
    ...fragments.map((f) => {
      const at = exchangeAt(starts, f.byteStart);
      const extra = { start: f.byteStart, ...at, ...breaksIn(starts, f.byteStart, f.content), forms: formsOf([f.content], FORMS_MAX) };
      return doc(f.chunk, 0, f.content, extra, hashOf(f.chunk, f.content, JSON.stringify(extra)));
    }),
  ];
}
