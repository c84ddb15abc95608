/**
 * Where the search index's bytes and indexing time go: the bench corpus's sessions (bench/corpus.ts)
 * turned into the service's own documents (src/domain/search-documents.ts) and indexed into a fresh
 * engine per variant, each variant one change from the service's settings, so that what each part
 * costs is visible. No database, no outbox: the engine alone, in batches of 500 sessions.
 *
 *   npx tsx bench/index-settings.ts                         # 10k sessions, every variant
 *   npx tsx bench/index-settings.ts --sessions=2000 --variants=service,by-attribute
 *   npx tsx bench/index-settings.ts --load-memory=2GiB      # the engine's indexing memory (as bench/search.ts)
 *   npx tsx bench/index-settings.ts --large=40 --sessions=250 # sessions of 40 corpus sessions each (~170 KB: fragments)
 *   npx tsx bench/index-settings.ts --lmdb …                # also each variant's bytes per engine database (needs mdb_stat, lmdb-utils)
 *
 * Prints per variant `<variant>: <x> engine bytes per markdown byte, <n> sessions/s (<m> MB/s of
 * markdown)`. `anchor` is a raw engine with default settings and one document per session (name,
 * tags and markdown), as `bench/search.ts --anchor`.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Meilisearch, type Settings } from 'meilisearch';
import { EmbeddedMeili } from '../src/search/embedded/embedded';
import { createNodeHttpClient } from '../src/search/engine/http-client';
import { INDEX_SETTINGS } from '../src/search/engine/index-settings';
import { toDocuments, type SessionDocument } from '../src/domain/search-documents';
import { withoutSeparators } from '../src/domain/kept-apart';
import { generateSession, vocabulary } from './corpus';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const SESSIONS = Number(arg('sessions') ?? 10_000);

type Doc = Record<string, unknown>;
interface Variant {
  /** What differs from the service's settings and documents. */
  says: string;
  settings?: Settings;
  /** The documents of one session as this variant indexes them. */
  docs?: (docs: SessionDocument[], g: ReturnType<typeof generateSession>, seed: number) => Doc[];
}

/** An attribute's entries as one run of words again (no separators: the engine records their pairs), as before kept-apart.ts. */
const together = (v: unknown) => (typeof v === 'string' ? withoutSeparators(v) : v);
const joined = (docs: SessionDocument[], attrs: string[]) =>
  docs.map((d) => Object.fromEntries(Object.entries(d).map(([k, v]) => [k, attrs.includes(k) ? together(v) : v])));
const withoutForms = (docs: SessionDocument[]) => docs.map(({ forms: _f, termForms: _t, ...d }) => d);
/** The filterable digests (keyOf's 20 hex digits) cut to 16: what shorter filter keys would save. */
const DIGESTS = INDEX_SETTINGS.filterableAttributes.filter((a) => /Digests?$/.test(a));
const cut = (v: unknown): unknown => (typeof v === 'string' ? v.slice(0, 16) : Array.isArray(v) ? v.map(cut) : v);
const shortKeys = (docs: Doc[]) => docs.map((d) => Object.fromEntries(Object.entries(d).map(([k, v]) => [k, DIGESTS.includes(k) ? cut(v) : v])));
const withoutOutline = (docs: SessionDocument[]) => docs.map(({ outline: _o, ...d }) => d);

const VARIANTS: Record<string, Variant> = {
  service: { says: "the service's settings and documents" },
  'by-attribute': { says: 'proximityPrecision byAttribute', settings: { ...INDEX_SETTINGS, proximityPrecision: 'byAttribute' } },
  'no-prefix': { says: 'prefixSearch disabled', settings: { ...INDEX_SETTINGS, prefixSearch: 'disabled' } },
  'forms-together': { says: "forms as one run of words (each word's not kept apart)", docs: (d) => joined(d, ['forms', 'termForms']) },
  'terms-together': { says: "large sessions' word lists as one run of words", docs: (d) => joined(d, ['terms', 'terms2', 'terms3', 'terms4']) },
  'no-forms': { says: 'documents without word forms', docs: (d) => withoutForms(d) },
  'no-outline': { says: 'documents without outlines', docs: (d) => withoutOutline(d) },
  'no-filters': { says: 'no filterable attributes', settings: { ...INDEX_SETTINGS, filterableAttributes: [] } },
  anchor: {
    says: 'a raw engine: default settings, one document per session',
    settings: {},
    docs: (_d, g, seed) => [{ id: String(seed), name: g.name, tags: g.tags, markdown: g.markdown }],
  },
  'anchor-by-attribute': {
    says: 'a raw engine with proximityPrecision byAttribute, one document per session',
    settings: { proximityPrecision: 'byAttribute' },
    docs: (_d, g, seed) => [{ id: String(seed), name: g.name, tags: g.tags, markdown: g.markdown }],
  },
  'by-attribute-no-forms-short-keys': {
    says: 'proximityPrecision byAttribute, documents without word forms, filter digests of 16 characters',
    settings: { ...INDEX_SETTINGS, proximityPrecision: 'byAttribute' },
    docs: (d) => shortKeys(withoutForms(d)),
  },
  'by-attribute-no-forms': {
    says: 'proximityPrecision byAttribute, documents without word forms',
    settings: { ...INDEX_SETTINGS, proximityPrecision: 'byAttribute' },
    docs: (d) => withoutForms(d),
  },
};
const chosen = (arg('variants') ?? Object.keys(VARIANTS).join(',')).split(',');
for (const v of chosen) if (!VARIANTS[v]) throw new Error(`--variants: ${v}? (${Object.keys(VARIANTS).join(', ')})`);

const words = vocabulary();
const userId = crypto.randomUUID();

/** --large=N: each session is N of the corpus's sessions one after the other (over 64 KB: a large session, indexed in fragments). */
const LARGE = Number(arg('large') ?? 1);
/** Sessions per engine task: 500 of the corpus's, fewer when each is several. */
const BATCH = Math.max(10, Math.floor(500 / LARGE));

/** One session of the corpus as the service's documents, and its markdown's bytes. */
function sessionDocs(seed: number): { g: ReturnType<typeof generateSession>; docs: SessionDocument[]; bytes: number } {
  const parts = Array.from({ length: LARGE }, (_, k) => generateSession(seed * LARGE + k, words));
  const g = { ...parts[0], markdown: parts.map((p) => p.markdown).join('') };
  const row = {
    projectId: `bench-${seed % 100}`,
    id: `session-${seed}`,
    userId,
    name: g.name,
    createdAt: new Date(Date.UTC(2026, 0, 1) + seed * 60_000),
    clientName: 'specstory-cli',
    agentName: 'claude-code',
    deviceId: null,
    metadataJson: JSON.stringify({ tags: g.tags, llmModels: g.llmModels, gitBranches: [] }),
    hasGitBranches: false,
    contentDigest: crypto.createHash('sha256').update(g.markdown).digest('hex'),
    uploadedBy: userId,
  };
  return { g, docs: toDocuments(row, g.markdown, Date.now()), bytes: Buffer.byteLength(g.markdown) };
}

async function measure(name: string, v: Variant, dataDir: string): Promise<string> {
  const engine = new EmbeddedMeili({ dataDir, name: `meili-${name}`, maxIndexingMemory: arg('load-memory') });
  await engine.start();
  try {
    const client = new Meilisearch({ host: engine.url!, apiKey: engine.masterKey, httpClient: createNodeHttpClient() });
    await client.createIndex('bench', { primaryKey: 'id' }).waitTask();
    const index = client.index('bench');
    const settings = v.settings ?? INDEX_SETTINGS;
    if (Object.keys(settings).length > 0) {
      const task = await index.updateSettings(settings).waitTask({ timeout: 600_000 });
      if (task.status !== 'succeeded') throw new Error(`settings: ${task.error?.message}`);
    }
    let bytes = 0;
    const t = performance.now();
    for (let start = 0; start < SESSIONS; start += BATCH) {
      const docs: Doc[] = [];
      for (let seed = start + 1; seed <= Math.min(SESSIONS, start + BATCH); seed++) {
        const s = sessionDocs(seed);
        bytes += s.bytes;
        docs.push(...(v.docs ? v.docs(s.docs, s.g, seed) : (s.docs as unknown as Doc[])));
      }
      const task = await index.addDocuments(docs).waitTask({ timeout: 24 * 3_600_000 });
      if (task.status !== 'succeeded') throw new Error(`indexing: ${task.error?.message}`);
    }
    const seconds = (performance.now() - t) / 1000;
    const { usedDatabaseSize } = await client.getStats();
    if (process.argv.includes('--lmdb')) console.log(lmdbShares(path.join(dataDir, `meili-${name}`), bytes));
    return `${name}: ${(usedDatabaseSize / bytes).toFixed(2)} engine bytes per markdown byte, ${(SESSIONS / seconds).toFixed(SESSIONS / seconds < 10 ? 1 : 0)} sessions/s (${(bytes / 1048576 / seconds).toFixed(2)} MB/s of markdown)   [${v.says}]`;
  } finally {
    await engine.stop();
  }
}

/**
 * The index's bytes per engine database (its LMDB sub-databases: word pairs, positions, documents…),
 * per markdown byte, largest first, from `mdb_stat -a` on a copy of the index's file, taken
 * while the engine is idle (the engine's lock file is of a newer LMDB than mdb_stat's).
 */
function lmdbShares(engineHome: string, markdownBytes: number): string {
  const indexes = path.join(engineHome, 'data.ms', 'indexes');
  const rows: Array<[string, number]> = [];
  for (const uid of fs.readdirSync(indexes)) {
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-lmdb-'));
    let out: string;
    try {
      fs.copyFileSync(path.join(indexes, uid, 'data.mdb'), path.join(copy, 'data.mdb'));
      out = execFileSync('mdb_stat', ['-a', copy], { encoding: 'utf8', maxBuffer: 64 << 20 });
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
    for (const block of out.split(/^Status of /m).slice(1)) {
      const name = block.split('\n')[0].trim();
      const pages = ['Branch', 'Leaf', 'Overflow'].reduce((n, k) => n + Number(new RegExp(`${k} pages: (\\d+)`).exec(block)?.[1] ?? 0), 0);
      const size = Number(/Page size: (\d+)/.exec(block)?.[1] ?? 4096);
      rows.push([name, pages * size]);
    }
  }
  rows.sort((a, b) => b[1] - a[1]);
  return rows
    .filter(([, b]) => b / markdownBytes >= 0.01)
    .map(([n, b]) => `    ${(b / markdownBytes).toFixed(2).padStart(6)}  ${n}`)
    .join('\n');
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-index-settings-'));
  const cleanup = () => fs.rmSync(dataDir, { recursive: true, force: true });
  // Interrupted or stopped: the data dir goes too (the engine is stopped on exit, embedded.ts).
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      cleanup();
      process.exit(130);
    });
  try {
    console.log(`index settings: ${SESSIONS} sessions of the bench corpus${LARGE > 1 ? ` (each ${LARGE} of them joined)` : ''}, batches of ${BATCH}`);
    for (const name of chosen) {
      console.log(await measure(name, VARIANTS[name], dataDir));
      fs.rmSync(path.join(dataDir, `meili-${name}`), { recursive: true, force: true });
    }
  } finally {
    cleanup();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
