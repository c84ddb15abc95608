/**
 * The second stage of indexing with semantic search (docs/search.md, "Semantic search"): the
 * outbox worker pushes documents with an empty `_vectors` entry and no `vectorHash`; this loop
 * finds them (they are the queue: `vectorHash` missing or null), asks the embeddings endpoint for
 * their vectors, at most EMBEDDINGS_PER_MINUTE document texts a minute, and writes each vector
 * with the hash of the document it was computed for (a partial update: nothing else changes).
 *
 * A document replaced while its vector was being computed (a new version of the session) could
 * get the older vector: after each update the documents are read again, and one whose `hash` is
 * not its `vectorHash` any more is queued again (`vectorHash: null`). A document deleted meanwhile
 * would come back as a stub holding only an id and a vector (a partial update creates what is
 * missing): stubs have no `userId`, so no search (always filtered by owner) can see them, and
 * they are deleted here. The endpoint failing leaves the documents queued (one log line a
 * minute; the loop waits longer after each failure, up to a minute).
 *
 * Every instance of the service runs this loop, but one at a time embeds: a pass runs under the
 * database's named lock (tryNamedLock), so that two instances never send the same documents to
 * the endpoint (which bills each text). An instance without the lock only counts what waits.
 *
 * Standbys (MEILI_STANDBY_URLS) get the same documents from the outbox, waiting for their vector
 * the same way; their vectors are copied from their primary (the same document, its vector made
 * for the same `hash`), never asked of the endpoint again. A standby's document whose vector the
 * primary does not hold yet waits for a later pass; while the primary is down, none is copied.
 */
import type { Index } from 'meilisearch';
import type * as mariadb from 'mariadb';
import { tryNamedLock } from '../../data/locks';
import { EMBEDDER, TOMBSTONE, type SessionDocument } from '../../domain/search-documents';
import { withoutSeparators } from '../../domain/kept-apart';
import { engineText } from '../../domain/engine-text';
import type { Logger } from '../../logger';
import type { MeiliConnection } from '../engine/connection';
import type { SearchEngine } from '../engine/engines';
import { recentUidOf } from '../engine/index-settings';
import { EMBED_MAX_CHARS, vectorOf, type Embedder } from './embedder';

/** Documents waiting for their vector. */
const PENDING_FILTER = 'vectorHash IS NULL OR vectorHash NOT EXISTS';
/** Texts per request to the endpoint. */
const BATCH = 32;
/** A standby's waiting documents looked at per pass (their vectors are copied: no endpoint, no budget). */
const COPY_BATCH = 200;
const IDLE_MS = 1000;
const MAX_BACKOFF_MS = 60_000;

type Pending = Pick<SessionDocument, 'id' | 'hash' | 'name' | 'tags' | 'content' | 'terms' | 'sessionDigest'>;
/** An index a pass looks at; a standby's names the same index of its primary, its vectors' source. */
interface Target {
  conn: MeiliConnection;
  uid: string;
  copyFrom?: MeiliConnection;
}

/**
 * What is embedded of a document: its name and tags, then its text (a large session's document:
 * its words, without the separators that keep them apart for the engine), as written (not as the
 * engine holds it, engine-text.ts), cut to EMBED_MAX_CHARS. Null: nothing to embed.
 */
function textOf(d: Partial<Pending>): string | null {
  if (d.hash === TOMBSTONE) return null;
  const text = [d.name ?? '', (d.tags ?? []).join(' '), d.content || withoutSeparators(d.terms ?? '')]
    .map((s) => engineText(s).trim())
    .filter(Boolean)
    .join('\n');
  return text ? text.slice(0, EMBED_MAX_CHARS) : null;
}

export class EmbeddingSweeper {
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private backoff = 0;
  /** Per standby index (its engine's URL and uid), where its next copy pass reads waiting documents. */
  private readonly copyOffsets = new Map<string, number>();

  constructor(
    private readonly opts: {
      engines: SearchEngine[];
      indexUid: string;
      embedder: Embedder;
      log: Logger;
      /** The database pool holding the sweep's named lock, and the lock's name (one per namespace). */
      pool: mariadb.Pool;
      lockName: string;
    },
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    this.loop = null;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let done = 0;
      try {
        const pass = await tryNamedLock(this.opts.pool, this.opts.lockName, () => this.sweep());
        // Another instance is embedding: only the count of what waits, for this one's metrics.
        done = pass.got ? pass.value : await this.sweep(false);
        this.backoff = 0;
      } catch (err) {
        this.backoff = Math.min(MAX_BACKOFF_MS, Math.max(IDLE_MS * 5, this.backoff * 2));
        this.opts.log.debug({ msg: 'embedding sweep failed', err: String((err as Error)?.message ?? err) });
      }
      if (done === 0 || this.backoff > 0 || this.opts.embedder.budget() === 0) await this.sleep(this.backoff || IDLE_MS);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(t);
        this.wake = null;
        resolve();
      };
    });
  }

  /** The indexes that can be written now: each primary's main and recent index, then those of its standby when both are up. */
  private targets(): Target[] {
    const [main, recent] = [this.opts.indexUid, recentUidOf(this.opts.indexUid)];
    return this.opts.engines
      .filter((e) => e.ready && e.primaryUp())
      .flatMap((e) => [
        { conn: e.primary.main, uid: main },
        { conn: e.primary.recent, uid: recent },
        ...(e.standby && e.standbyUp()
          ? [
              { conn: e.standby.main, uid: main, copyFrom: e.primary.main },
              { conn: e.standby.recent, uid: recent, copyFrom: e.primary.recent },
            ]
          : []),
      ]);
  }

  /**
   * One pass over every index: a batch of waiting documents each (within the budget); `embed`
   * false: only counts them. Returns how many got a vector.
   */
  async sweep(embed = true): Promise<number> {
    let done = 0;
    let pending = 0;
    let onStandbys = 0;
    for (const { conn, uid, copyFrom } of this.targets()) {
      if (copyFrom) {
        const standby = conn.admin().index<SessionDocument>(uid);
        const copy = embed
          ? await this.copyVectors(standby, copyFrom.admin().index<SessionDocument>(uid), `${conn.url}\n${uid}`)
          : { copied: 0, waiting: (await standby.getDocuments({ filter: PENDING_FILTER, fields: ['id'], limit: 1 })).total };
        done += copy.copied;
        onStandbys += copy.waiting - copy.copied;
        continue;
      }
      const index = conn.admin().index<SessionDocument>(uid);
      const room = embed ? Math.min(BATCH, this.opts.embedder.budget()) : 0;
      const page = await index.getDocuments<Pending>({
        filter: PENDING_FILTER,
        fields: embed ? ['id', 'hash', 'name', 'tags', 'content', 'terms', 'sessionDigest'] : ['id'],
        limit: Math.max(1, room),
      });
      pending += page.total;
      if (room === 0 || page.results.length === 0) continue;
      const docs = page.results;
      const vectors = new Map<string, number[] | null>();
      const asked: Array<{ id: string; text: string }> = [];
      for (const d of docs) {
        const text = textOf(d);
        const cached = text === null ? undefined : this.opts.embedder.cached(text);
        if (text === null) vectors.set(d.id, null);
        else if (cached) vectors.set(d.id, cached);
        else asked.push({ id: d.id, text });
      }
      if (asked.length) {
        const got = await this.opts.embedder.documents(asked.map((a) => a.text));
        asked.forEach((a, i) => vectors.set(a.id, got[i]));
      }
      const updates = docs.map((d) => ({ id: d.id, vectorHash: d.hash, _vectors: { [EMBEDDER]: vectors.get(d.id) ?? null } }));
      const task = await index.updateDocuments(updates).waitTask({ timeout: 60_000, interval: 20 });
      if (task.status !== 'succeeded') throw new Error(`vectors of ${uid}: ${task.error?.code ?? task.status}`);
      await this.verify(index, docs);
      done += docs.length;
      pending -= docs.length;
    }
    this.opts.embedder.setPending(Math.max(0, pending), Math.max(0, onStandbys));
    return done;
  }

  /**
   * A standby index's waiting documents get the vectors `source` (its primary's same index) holds
   * for them, made for the same `hash` (a document with nothing to embed gets none, as on the
   * primary). Returns how many waited (the standby index's count) and how many got theirs; the
   * others wait. The primary's versions are read without vectors first: while documents wait for
   * vectors the primary has not made, a pass reads ids and hashes only. A page where none can be
   * copied moves the next pass on to the following page (back to the start after the last), so that
   * documents the primary holds in another version (until a compaction) do not hold back those
   * behind them.
   */
  private async copyVectors(standby: Index<SessionDocument>, source: Index<SessionDocument>, at: string): Promise<{ waiting: number; copied: number }> {
    type Waiting = Pick<SessionDocument, 'id' | 'hash' | 'sessionDigest'>;
    const offset = this.copyOffsets.get(at) ?? 0;
    const page = await standby.getDocuments<Waiting>({ filter: PENDING_FILTER, fields: ['id', 'hash', 'sessionDigest'], limit: COPY_BATCH, offset });
    const ids = (docs: Waiting[]) => ({ ids: docs.map((d) => d.id), limit: docs.length });
    if (page.results.length === 0) {
      this.copyOffsets.set(at, 0);
      return { waiting: page.total, copied: 0 };
    }
    const primary = await source.getDocuments<{ id: string; vectorHash?: string | null }>({ ...ids(page.results), fields: ['id', 'vectorHash'] });
    const versions = new Map(primary.results.map((d) => [d.id, d.vectorHash]));
    const ready = page.results.filter((d) => versions.get(d.id) === d.hash);
    // The next pass: the following page when none of a full one could be copied; the same place
    // when some were (they leave the waiting ones); the start after the last page.
    this.copyOffsets.set(at, page.results.length < COPY_BATCH ? 0 : ready.length === 0 ? offset + COPY_BATCH : offset);
    if (ready.length === 0) return { waiting: page.total, copied: 0 };
    type Made = { id: string; vectorHash?: string | null; _vectors?: Record<string, unknown> };
    const made = await source.getDocuments<Made>({ ...ids(ready), fields: ['id', 'vectorHash'], retrieveVectors: true });
    const waiting = new Map(ready.map((d) => [d.id, d]));
    // Each waiting document with the vector its primary still holds for the same hash.
    const copies = made.results.flatMap((m) => {
      const d = waiting.get(m.id);
      return d && m.vectorHash === d.hash ? [{ doc: d, vector: vectorOf(m._vectors?.[EMBEDDER]) }] : [];
    });
    if (copies.length === 0) return { waiting: page.total, copied: 0 };
    const updates = copies.map(({ doc, vector }) => ({ id: doc.id, vectorHash: doc.hash, _vectors: { [EMBEDDER]: vector } }));
    const task = await standby.updateDocuments(updates).waitTask({ timeout: 60_000, interval: 20 });
    if (task.status !== 'succeeded') throw new Error(`vectors of ${standby.uid}: ${task.error?.code ?? task.status}`);
    await this.verify(
      standby,
      copies.map((c) => c.doc),
    );
    return { waiting: page.total, copied: copies.length };
  }

  /** Documents replaced while their vector was computed are queued again; stubs of documents deleted meanwhile are removed. */
  private async verify(index: Index<SessionDocument>, docs: Array<Pick<SessionDocument, 'id' | 'hash' | 'sessionDigest'>>): Promise<void> {
    const digests = [...new Set(docs.map((d) => d.sessionDigest).filter(Boolean))];
    const now = new Map<string, { hash?: string; vectorHash?: string | null }>();
    if (digests.length) {
      const filter = `sessionDigest IN [${digests.map((d) => JSON.stringify(d)).join(', ')}]`;
      for (let offset = 0; ; offset += 1000) {
        const page = await index.getDocuments<{ id: string; hash: string; vectorHash?: string | null }>({
          filter,
          fields: ['id', 'hash', 'vectorHash'],
          limit: 1000,
          offset,
        });
        for (const d of page.results) now.set(d.id, d);
        if (page.results.length < 1000) break;
      }
    }
    const requeue = docs.filter((d) => {
      const n = now.get(d.id);
      return n && n.vectorHash && n.vectorHash !== n.hash;
    });
    if (requeue.length) await index.updateDocuments(requeue.map((d) => ({ id: d.id, vectorHash: null }))).waitTask({ timeout: 60_000, interval: 20 });
    if (docs.some((d) => !now.has(d.id))) await index.deleteDocuments({ filter: 'userId NOT EXISTS' }).waitTask({ timeout: 60_000, interval: 20 });
  }
}
