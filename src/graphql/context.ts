import { withSnapshotOnDemand, type Ctx } from '../services/context';
import type { SessionEventHub } from '../live/session-events';
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
  /** Session changes, on the subscription stream only (src/graphql/live.ts). */
  live?: SessionEventHub;
}

/**
 * Reads go to a snapshot taken on the first read once the operation is known to be a query
 * (Apollo's didResolveOperation), so every field of one response — row, etag, sizes and
 * `markdownContent` — comes from one committed version.
 */
export function createGraphqlContext(ctx: Ctx, origin: string): GraphqlContext {
  const reads = withSnapshotOnDemand(ctx);
  return {
    ctx: reads.ctx,
    loaders: createLoaders(reads.ctx, origin),
    origin,
    readFromSnapshot: () => reads.useSnapshot(),
    release: () => reads.release(),
  };
}
