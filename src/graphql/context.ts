import type { Snapshot, Sql } from '../data/sql';
import { withReads, type Ctx } from '../services/context';
import { createLoaders, type Loaders } from './loaders';

/** Per-request GraphQL context: the service context plus this request's batching loaders. */
export interface GraphqlContext {
  ctx: Ctx;
  loaders: Loaders;
  /** The service's own origin as this request reaches it (share links' `url`), as REST computes it. */
  origin: string;
  /**
   * A query reads one snapshot (everything one response says comes from one committed version);
   * a mutation reads what it has just written.
   */
  readFromSnapshot(): void;
  release(): Promise<void>;
}

/**
 * Reads go to a snapshot taken on the first read once the operation is known to be a query
 * (Apollo's didResolveOperation), so every field of one response — row, etag, sizes and
 * `markdownContent` — comes from one committed version.
 */
export function createGraphqlContext(ctx: Ctx, origin: string): GraphqlContext {
  const plain = ctx.deps.db.reads;
  let snapshot: Snapshot | null = null;
  const reads: Sql = {
    isSql: true,
    query: (q, ...v) => (snapshot ?? plain).query(q, ...v),
    execute: (q, ...v) => (snapshot ?? plain).execute(q, ...v),
  };
  const readCtx = withReads(ctx, reads);
  return {
    ctx: readCtx,
    loaders: createLoaders(readCtx, origin),
    origin,
    readFromSnapshot() {
      snapshot ??= ctx.deps.db.lazySnapshot();
    },
    async release() {
      await snapshot?.release();
    },
  };
}
