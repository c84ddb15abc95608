import type { Meilisearch, Settings } from 'meilisearch';
import { EMBEDDER, TERM_ATTRIBUTES } from '../../domain/search-documents';
import { hasEngineCode } from './http-client';

/**
 * The index is versioned by its document layout: a service whose layout changed starts on a new
 * index (rebuilt from the database, see ensureIndex's caller) and removes the older ones.
 */
const INDEX_LAYOUT_VERSION = 7;
/**
 * With semantic search (EMBEDDINGS_URL), the index has an embedder of EMBEDDINGS_DIMENSIONS
 * dimensions and every document a `_vectors` entry: a layout of its own (`…_v7_e1536`), created
 * and rebuilt from the database like a new layout (the engine refuses to add a userProvided
 * embedder to an index whose documents have no `_vectors` entry).
 */
export const indexUidOf = (namespace: string, dimensions: number | null = null) =>
  `${namespace}_sessions_v${INDEX_LAYOUT_VERSION}${dimensions ? `_e${dimensions}` : ''}`;
/** The embedder's dimensions of an index (main or recent) named by indexUidOf; null: none. */
export const dimensionsOf = (uid: string): number | null => {
  const m = /_e(\d+)(?:_recent)?$/.exec(uid);
  return m ? Number(m[1]) : null;
};
/**
 * The indexes of the current layout with or without an embedder other than `current` (and its
 * recent index), among `uids`: a service started with other EMBEDDINGS_* settings left them, and
 * they are stale once `current` is rebuilt.
 */
export const otherVariantsOf = (namespace: string, current: string, uids: string[]) => {
  const plain = indexUidOf(namespace);
  return uids.filter((u) => u !== current && u !== recentUidOf(current) && (u === plain || u === recentUidOf(plain) || u.startsWith(`${plain}_e`)));
};
const RECENT_SUFFIX = '_recent';
/** The recent index that goes with a main index (fresh writes; see worker.ts). */
export const recentUidOf = (mainUid: string) => `${mainUid}${RECENT_SUFFIX}`;
const isRecentUid = (uid: string) => uid.endsWith(RECENT_SUFFIX);
/**
 * Indexes of earlier layouts (and their recent indexes), deleted once the current one exists.
 * v3: exact, case-free keys (`sessionDigest`, `projectDigest`) for every filter.
 * v4: `uploaderDigest`, so that the engine applies the `uploaderIds` filter and `total` counts
 * exactly the sessions it selects.
 * v5: `tagDigests`, `modelDigests`, `branchDigests`, `deviceDigest`, for the same reason: the
 * engine compared tags, models, branches and devices without case, so `Tag` also counted `tag`.
 * v6: `<` and `>` of the searchable texts swapped with `‹` and `›` (engine-text.ts), so that the
 * index needs no separatorTokens.
 * v7: fewer stored bytes for the same search: filter keys of 20 hex digits instead of 40
 * (search-documents.ts keyOf), and word lists kept apart by `;` instead of ` . ` (kept-apart.ts).
 */
export const legacyIndexUidsOf = (namespace: string) => [
  `${namespace}_sessions`,
  ...Array.from({ length: INDEX_LAYOUT_VERSION - 2 }, (_, i) => `${namespace}_sessions_v${i + 2}`).flatMap((uid) => [uid, recentUidOf(uid)]),
];

/**
 * Highest `total` a search reports (the engine's `maxTotalHits`). Counting is exact up to this
 * bound (adapter.ts countedPage); beyond it `total` saturates.
 */
export const MAX_TOTAL_HITS = 10_000;

/**
 * Index settings, declared here and applied at start when they differ (so no restart re-indexes
 * for nothing). Documents are sessions and fragments of large sessions (documents.ts); searches
 * collapse them per session with `distinct: 'sessionDigest'` given at query time (the
 * matching-fragments query needs them uncollapsed).
 */
export const INDEX_SETTINGS = {
  // Order matters for the "attribute" rule: a match in the name beats one in the tags or text.
  // The other forms of the words last, marked: only forms queries ask for them (planned-page.ts).
  searchableAttributes: ['name', 'tags', 'content', ...TERM_ATTRIBUTES, 'forms', 'termForms'],
  filterableAttributes: [
    'userId',
    // Exact keys (documents.ts keyOf): the engine compares strings without case.
    'projectDigest',
    'sessionDigest',
    'uploaderDigest',
    'modelDigests',
    'tagDigests',
    'branchDigests',
    'deviceDigest',
    // Compared without case on purpose (indexed and asked lower-cased).
    'clientName',
    'agentName',
    'createdAt',
    'hasGitBranches',
    'syncedAt',
    // Whole-indexed sessions are counted without `distinct` (adapter.ts).
    'whole',
  ],
  sortableAttributes: [],
  displayedAttributes: ['*'],
  rankingRules: ['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness'],
  distinctAttribute: null,
  typoTolerance: {
    enabled: true,
    minWordSizeForTypos: { oneTypo: 5, twoTypos: 9 },
    disableOnWords: [],
    // Stems are matched as they are: `retri` one typo from `retro` is no form of `retry`.
    disableOnAttributes: ['forms', 'termForms'],
  },
  pagination: { maxTotalHits: MAX_TOTAL_HITS },
  // `whole` is asked as a facet for every search's total (counted-page.ts, planned-page.ts). By
  // count, the engine counts each of its two values by intersecting that value's documents with
  // the matching ones; alphabetically (the default) it reads every matching document's values one
  // by one whenever 3,000 or fewer match, which is most searches. What it buys: docs/benchmarks.md.
  faceting: { maxValuesPerFacet: 100, sortFacetValuesBy: { '*': 'alpha', whole: 'count' } },
  // Neither is used; both cost indexing time.
  facetSearch: false,
  stopWords: [],
  synonyms: {},
  proximityPrecision: 'byWord',
  // prefixSearch stays at the engine's default ('indexingTime'), although its prefix databases
  // are most of the cost of a small update (at 20k sessions ~750 ms of a ~1 s one-session update,
  // growing with the index): 'disabled' turns prefix matching off altogether in Meilisearch 1.21,
  // and search as you type needs it on the last query word (docs/search.md). Measured with
  // `bench/search.ts --prefix-search=disabled`: that update took ~0.3 s instead of ~1 s, and
  // freshness at 100k sessions was still p95 ~1.1 s, over its 1 s target.
  // No separatorTokens: a word glued to a tag (`<b>word</b>`) is a word of its own because the
  // text is sent with `<` and `>` swapped for separators the engine already has (engine-text.ts);
  // declared separators cost every query ~3 ms (bench/engine-floor.ts).
} satisfies Settings;

const canonical = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
};

/**
 * The declared settings of index `uid`: with an embedder when its name carries its dimensions
 * (docs/search.md, "Semantic search"), and for a recent index with `noMainCopy` filterable (the
 * sessions the main index holds no copy of, held-sessions.ts). Only there: the main index never
 * holds it, and an attribute made filterable makes the engine read the index's every document
 * again (at an upgrade, the whole main index).
 */
export function indexSettingsFor(uid: string): Settings {
  const dimensions = dimensionsOf(uid);
  const filterableAttributes: string[] = [
    ...INDEX_SETTINGS.filterableAttributes,
    // The hash of the document a vector was computed for (embedding-sweeper.ts): missing or null, the document waits for one.
    ...(dimensions ? ['vectorHash'] : []),
    ...(isRecentUid(uid) ? ['noMainCopy'] : []),
  ];
  return {
    ...INDEX_SETTINGS,
    filterableAttributes,
    ...(dimensions ? { embedders: { [EMBEDDER]: { source: 'userProvided', dimensions } } } : {}),
  };
}

const UNORDERED = new Set(['filterableAttributes', 'stopWords']);

/** The declared settings that the index does not have yet (deep comparison, array order kept). */
export function settingsDiff(current: Settings, declared: Settings = INDEX_SETTINGS): Partial<Settings> {
  const diff: Record<string, unknown> = {};
  for (const [key, want] of Object.entries(declared)) {
    const have: unknown = (current as Record<string, unknown>)[key];
    const wantC = canonical(want);
    const haveC =
      want && typeof want === 'object' && !Array.isArray(want) && have && typeof have === 'object'
        ? canonical(Object.fromEntries(Object.keys(want).map((k) => [k, (have as Record<string, unknown>)[k]])))
        : canonical(have);
    // Sets to the engine (it answers them in its own order): compared sorted.
    const norm = (x: unknown) => (UNORDERED.has(key) && Array.isArray(x) ? [...(x as unknown[])].sort() : x);
    if (JSON.stringify(norm(wantC)) !== JSON.stringify(norm(haveC))) diff[key] = want;
  }
  return diff;
}

const isIndexNotFound = (err: unknown) => hasEngineCode(err, 'index_not_found');

export { isIndexNotFound };

/**
 * Creations this process asked of an engine and stopped waiting for (a busy engine applies tasks
 * in order, behind its other batches), by host and index: the next call waits on the same task
 * instead of asking again, and reports the index as its own creation when that task succeeds.
 * Asking again queued one more creation per retry, and the index that the first one made was seen
 * as existing already, so nothing rebuilt it from the database.
 */
const pendingCreations = new Map<string, number>();

/** How long a call waits for an index's creation before it reports the index not ready (retried by the caller). */
const CREATE_WAIT_MS = 5_000;

/**
 * Creates the index when missing and applies the declared settings when they differ.
 * Returns true when this process created the index (it is empty: the caller rebuilds it).
 */
export async function ensureIndex(client: Meilisearch, uid: string, createWaitMs = CREATE_WAIT_MS): Promise<boolean> {
  const key = `${client.config.host}\n${uid}`;
  let creation = pendingCreations.get(key);
  let current: Settings | null = null;
  if (creation === undefined) {
    try {
      current = await client.index(uid).getSettings();
    } catch (err) {
      if (!isIndexNotFound(err)) throw err;
      creation = (await client.createIndex(uid, { primaryKey: 'id' })).taskUid;
      pendingCreations.set(key, creation);
    }
  }
  let created = false;
  if (creation !== undefined) {
    let task;
    try {
      task = await client.tasks.waitForTask(creation, { timeout: createWaitMs });
    } catch (err) {
      // Still queued, or the engine away for a moment: waited on again next time. Gone (an engine
      // that lost its tasks): asked again.
      if (hasEngineCode(err, 'task_not_found')) pendingCreations.delete(key);
      throw err;
    }
    pendingCreations.delete(key);
    // Another instance may have created it first: then it is not ours to rebuild.
    if (task.status === 'succeeded') created = true;
    else if (task.error?.code !== 'index_already_exists') throw new Error(`creating index ${uid}: ${task.error?.message}`);
  }
  current ??= await client.index(uid).getSettings();
  const diff = settingsDiff(current, indexSettingsFor(uid));
  if (Object.keys(diff).length > 0) {
    const task = await client
      .index(uid)
      .updateSettings(diff)
      .waitTask({ timeout: 10 * 60_000 });
    if (task.status !== 'succeeded') throw new Error(`updating settings of ${uid}: ${task.error?.message}`);
  }
  return created;
}
