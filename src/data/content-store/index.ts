/**
 * Which store new content is written to, process-wide: database rows (`db`, session_chunks) or
 * S3 objects (`s3`, session_objects naming them). Reads follow where each part is: a part is in
 * one store or the other (`content migrate` moves parts one transaction at a time), so both are
 * read whatever the mode, and objects are readable whenever a bucket is configured.
 *
 * Set at start (createDeps, the admin CLI) from the configuration; the data layer reads it here
 * rather than through every caller. Work run inside `withContentStore` (a service's requests and
 * background work) sees that service's store even when one process holds several (tests).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Config } from '../../config';
import type { ObjectStore } from './s3';

export interface ContentStore {
  /** Where writes go. */
  readonly writeTo: 'db' | 's3';
  /** The bucket, when one is configured. */
  readonly objects: ObjectStore | null;
  /** Keys of this installation's objects start with it (`<NAMESPACE>/`). */
  readonly prefix: string;
}

const DB_ONLY: ContentStore = Object.freeze({ writeTo: 'db', objects: null, prefix: '' });

let current: ContentStore = DB_ONLY;
const scoped = new AsyncLocalStorage<ContentStore>();

export function contentStore(): ContentStore {
  return scoped.getStore() ?? current;
}

/** Runs `fn` (and everything it starts: promises, timers) with `store` as the content store. */
export function withContentStore<T>(store: ContentStore, fn: () => T): T {
  return scoped.run(store, fn);
}

/** Makes `store` the process's content store; returns a function that puts the previous one back. */
function useContentStore(store: ContentStore): () => void {
  const previous = current;
  current = store;
  return () => {
    if (current === store) current = previous;
  };
}

/** The store the configuration describes (not yet checked: see openContentStore). */
async function contentStoreOf(config: Pick<Config, 'contentStore' | 's3' | 'namespace'>): Promise<ContentStore> {
  if (!config.s3) return config.contentStore === 'db' ? DB_ONLY : failConfig();
  // The S3 client (about 6 MB of heap once loaded) is loaded only when a bucket is configured:
  // a larger heap makes every major garbage collection of the process longer.
  const { createS3Store } = await import('./s3.js');
  return Object.freeze({ writeTo: config.contentStore, objects: createS3Store(config.s3), prefix: `${config.namespace}/` });
}

function failConfig(): never {
  throw new Error('CONTENT_STORE=s3 needs S3_BUCKET');
}

/**
 * The configured store, its bucket checked (a missing bucket fails here, at start, with a message
 * naming it), made the process's content store. `close()` puts the previous one back.
 */
export async function openContentStore(config: Pick<Config, 'contentStore' | 's3' | 'namespace'>): Promise<ContentStore & { close(): void }> {
  const store = await contentStoreOf(config);
  try {
    await store.objects?.checkBucket();
  } catch (err) {
    store.objects?.close();
    throw err;
  }
  const restore = useContentStore(store);
  return {
    ...store,
    close() {
      restore();
      store.objects?.close();
    },
  };
}

/** A new, never reused key for one version of one part. */
export function newObjectKey(store: ContentStore, sessionId: string, part: string, id: string): string {
  return `${store.prefix}content/${sessionId}/${part}/${id}`;
}
