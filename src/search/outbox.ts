/**
 * Index work recorded in the same transaction as the write it describes (transactional outbox).
 * The worker in this folder applies it; see README "Search".
 *
 * Ops: 'upsert' (session created or changed; 'upsert_large' when its markdown is too large to be
 * indexed whole, so that it goes to the worker's main lane), 'delete' (session deleted),
 * 'delete_project' (sessionId null); 'reindex' is written by a rebuild only (push the session
 * whole, unchanged fragments included); 'compact' moves a session into the main index (changed
 * fragments only: compaction of the recent index, and filling a new main index).
 */
import { WHOLE_MAX } from './documents';

export type OutboxOp = 'upsert' | 'upsert_large' | 'delete' | 'delete_project' | 'reindex' | 'compact';

/** The op of a session upsert, by the size of its markdown (see documents.ts, WHOLE_MAX). */
export const upsertOp = (markdownSize: number): OutboxOp => (markdownSize > WHOLE_MAX ? 'upsert_large' : 'upsert');

/** Anything that can run a raw statement: the Prisma client or an interactive transaction. */
export interface RawExecutor {
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}

export async function enqueueIndexWork(
  tx: RawExecutor,
  op: OutboxOp,
  userId: string,
  projectId: string,
  sessionId: string | null,
): Promise<void> {
  await tx.$executeRawUnsafe(
    'INSERT INTO search_outbox (op, userId, projectId, sessionId) VALUES (?, ?, ?, ?)',
    op,
    userId,
    projectId,
    sessionId,
  );
}
