/**
 * A generated corpus of coding sessions for the search benchmark: exchanges under "## User" /
 * "## Assistant" headings, prose with a Zipf-like word distribution over a technical vocabulary
 * plus a long tail of identifiers, and fenced code blocks. Deterministic for a given seed.
 * insertCorpus writes such sessions (and their users and projects) in bulk.
 */
import crypto from 'node:crypto';
import type * as mariadb from 'mariadb';
import { upsertOp } from '../src/domain/index-work';

const CORE = (
  'the a to of and in is for that it with on this as be are we you can will if not or by from at ' +
  'function return value error test build request session project query index cache retry timeout ' +
  'schema migration token deploy branch commit review refactor parse render handler worker queue ' +
  'database transaction server client config module import export type interface class method field ' +
  'array string number object promise async await callback event listener stream buffer file path ' +
  'docker kubernetes postgres mysql redis nginx webpack vite eslint prettier typescript javascript ' +
  'python rust golang react vue svelte express fastify graphql rest endpoint route middleware auth ' +
  'jwt oauth cookie header status response payload json yaml toml environment variable secret key ' +
  'deployment pipeline container image volume network port host socket connection pool latency ' +
  'throughput memory leak profile benchmark metric log trace span alert dashboard incident outage ' +
  'rollback release version semver changelog dependency package install lockfile registry monorepo ' +
  'workspace lint format compile bundle minify transpile polyfill runtime node deno bun browser dom ' +
  'component state props hook effect context reducer store selector action dispatch mutation ' +
  'resolver loader batch paginate cursor offset limit sort filter search rank snippet highlight ' +
  'fixture mock stub spy assert expect snapshot coverage flaky retry parallel serial integration unit'
).split(/\s+/);

/** Seeded PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = 'ka lo mi ra ten vor zu pel dri ox nam qui sel bar tor fen gla mu rix dap'.split(' ');

/** The vocabulary: common words first (frequent), then a long tail of made-up identifiers. */
export function vocabulary(size = 20_000, seed = 7): string[] {
  const r = rng(seed);
  const words = [...CORE];
  const seen = new Set(words);
  while (words.length < size) {
    const n = 2 + Math.floor(r() * 3);
    let w = '';
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(r() * SYLLABLES.length)];
    if (!seen.has(w)) {
      seen.add(w);
      words.push(w);
    }
  }
  return words;
}

/** Zipf-like sampling: index ~ floor(V^u) - 1 puts most mass on the first words. */
export function zipfSampler(words: string[], r: () => number): () => string {
  const logV = Math.log(words.length);
  return () => words[Math.min(words.length - 1, Math.floor(Math.exp(r() * logV)) - 1)];
}

export interface GeneratedSession {
  name: string;
  markdown: string;
  tags: string[];
  llmModels: string[];
}

const MODELS = ['claude-sonnet-4', 'gpt-4o', 'claude-opus-4', 'gemini-2.5-pro', 'o3'];
const TAGS = ['bug', 'feature', 'refactor', 'docs', 'perf', 'infra', 'test', 'security'];

/**
 * One session. Sizes follow a log-normal distribution (median ~`medianBytes`, capped at 64 KB),
 * which is what real transcripts look like: many short ones, a few long ones.
 */
export function generateSession(seed: number, words: string[], medianBytes = 3000): GeneratedSession {
  const r = rng(seed);
  const word = zipfSampler(words, r);
  const normal = () => Math.sqrt(-2 * Math.log(r() || 1e-9)) * Math.cos(2 * Math.PI * r());
  const target = Math.min(64 * 1024, Math.max(400, Math.round(medianBytes * Math.exp(0.8 * normal()))));
  const sentence = (n: number) => {
    const ws = Array.from({ length: n }, word);
    ws[0] = ws[0][0].toUpperCase() + ws[0].slice(1);
    return ws.join(' ') + '.';
  };
  const parts: string[] = [`# ${sentence(4).slice(0, -1)}\n\n`];
  let size = parts[0].length;
  for (let turn = 0; size < target; turn++) {
    let block: string;
    if (turn % 2 === 0) {
      block = `## User\n\n${sentence(8 + Math.floor(r() * 12))} ${sentence(6 + Math.floor(r() * 10))}\n\n`;
    } else {
      block = `## Assistant\n\n${Array.from({ length: 2 + Math.floor(r() * 4) }, () => sentence(10 + Math.floor(r() * 15))).join(' ')}\n\n`;
      if (r() < 0.6) {
        const fn = `${word()}${word()[0].toUpperCase()}${word().slice(1)}`;
        block +=
          '```ts\n' +
          `export async function ${fn}(${word()}: string): Promise<${r() < 0.5 ? 'void' : 'number'}> {\n` +
          `  const ${word()} = await ${word()}.${word()}(${word()});\n` +
          `  if (!${word()}) throw new Error('${sentence(4).slice(0, -1)}');\n` +
          `  return ${word()};\n}\n` +
          '```\n\n';
      }
      if (r() < 0.3) block += `- ${sentence(6)}\n- ${sentence(7)}\n- ${sentence(5)}\n\n`;
    }
    parts.push(block);
    size += block.length;
  }
  return {
    name: sentence(3 + Math.floor(r() * 4)).slice(0, -1),
    markdown: parts.join(''),
    tags: TAGS.filter(() => r() < 0.2),
    llmModels: [MODELS[Math.floor(r() * MODELS.length)]],
  };
}

/** Two-word queries of words that occur but are not everywhere (ranks ~50..2000). */
export function sampleQueries(n: number, words: string[], seed = 99): string[] {
  const r = rng(seed);
  const mid = words.slice(50, 2000);
  return Array.from({ length: n }, () => `${mid[Math.floor(r() * mid.length)]} ${mid[Math.floor(r() * mid.length)]}`);
}

/** A generated session written by insertCorpus. */
export interface CorpusSession {
  projectId: string;
  id: string;
  userId: string;
  uploadedBy?: string;
  name: string;
  md: Buffer;
  created: Date;
  llmModels: string[];
  tags: string[];
}

/**
 * Rows of a search corpus in bulk, past the services (no redaction, no upload path): users,
 * projects, sessions with their markdown (raw data empty) and, with `outbox`, an outbox row each:
 * 'compact', which the worker indexes straight into the main index as a rebuild's and an
 * import's rows are, or 'upsert' ('upsert_large' past WHOLE_MAX), the rows an upload leaves: the
 * recent index first, then the main one by compaction.
 */
export async function insertCorpus(
  pool: mariadb.Pool,
  rows: {
    users?: Array<{ id: string; email: string }>;
    projects?: Array<{ id: string; ownerId: string; ownerType?: 'user' | 'team' }>;
    sessions?: CorpusSession[];
    outbox?: 'compact' | 'upsert';
  },
): Promise<void> {
  const insert = <T>(head: string, row: string, items: T[] | undefined, values: (item: T) => unknown[]) =>
    items?.length ? pool.query(`${head} VALUES ${items.map(() => row).join(', ')}`, items.flatMap(values)) : undefined;
  await insert('INSERT INTO users (id, email)', '(?, ?)', rows.users, (u) => [u.id, u.email]);
  await insert('INSERT INTO projects (id, ownerId, ownerType, name, icon, color)', "(?, ?, ?, ?, 'Code2', 'blue')", rows.projects, (p) => [
    p.id,
    p.ownerId,
    p.ownerType ?? 'user',
    p.id,
  ]);
  const sessions = rows.sessions;
  await insert(
    'INSERT INTO sessions (projectId, id, userId, uploadedBy, name, markdownSize, rawDataSize, etag, contentDigest, createdAt, updatedAt, startedAt, endedAt, clientName, metadataJson)',
    "(?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, 'claude-code', ?)",
    sessions,
    (s) => {
      const digest = crypto.createHash('sha256').update(s.md).digest('hex');
      const meta = JSON.stringify({ llmModels: s.llmModels, tags: s.tags, gitBranches: [], extra: {} });
      return [s.projectId, s.id, s.userId, s.uploadedBy ?? null, s.name, s.md.length, `W/"${s.id}"`, digest, s.created, s.created, s.created, s.created, meta];
    },
  );
  await insert('INSERT INTO session_chunks (projectId, sessionId, part, seq, data)', "(?, ?, 'markdown', 0, ?), (?, ?, 'raw', 0, '')", sessions, (s) => [
    s.projectId,
    s.id,
    s.md,
    s.projectId,
    s.id,
  ]);
  const op = (s: CorpusSession) => (rows.outbox === 'upsert' ? upsertOp(s.md.length) : 'compact');
  if (rows.outbox)
    await insert('INSERT INTO search_outbox (op, userId, projectId, sessionId)', '(?, ?, ?, ?)', sessions, (s) => [op(s), s.userId, s.projectId, s.id]);
}
