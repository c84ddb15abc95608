import type { LazySnapshot } from '../db/client';
import { withReader, type Ctx } from '../services/context';
import { createLoaders, type Loaders } from './loaders';

/** Per-request GraphQL context: the service context plus this request's batching loaders. */
export interface GraphqlContext {
  ctx: Ctx;
  loaders: Loaders;
  /** A query reads one snapshot (contract §12); a mutation reads what it has just written. */
  readFromSnapshot(): void;
  release(): Promise<void>;
}

/**
 * Reads go to a snapshot taken on the first read once the operation is known to be a query
 * (Apollo's didResolveOperation), so every field of one response — row, etag, sizes and
 * `markdownContent` — comes from one committed version.
 */
export function createGraphqlContext(ctx: Ctx): GraphqlContext {
  const plain = ctx.deps.db.reader;
  let snapshot: LazySnapshot | null = null;
  const reader = {
    $queryRawUnsafe: (q: string, ...v: unknown[]) => (snapshot ?? plain).$queryRawUnsafe(q, ...v),
    $executeRawUnsafe: (q: string, ...v: unknown[]) => (snapshot ?? plain).$executeRawUnsafe(q, ...v),
  } as LazySnapshot;
  const readCtx = withReader(ctx, reader);
  return {
    ctx: readCtx,
    loaders: createLoaders(readCtx),
    readFromSnapshot() {
      snapshot ??= ctx.deps.db.lazySnapshot();
    },
    async release() {
      await snapshot?.release();
    },
  };
}
