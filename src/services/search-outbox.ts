/**
 * The search outbox as the operator sees it (the admin CLI, the /metrics scrape): index work
 * waiting, work set aside after failing 10 times (search_outbox_dead), and requeueing that.
 */
import { backlogCount, deadCount, retryDeadRows } from '../data/outbox';
import type { OperatorCtx } from './context';

/** Index operations waiting in the outbox. */
export function outboxBacklog(ctx: OperatorCtx): Promise<number> {
  return backlogCount(ctx.deps.db.writes);
}

/** Index work set aside after failing 10 times. */
export function outboxDeadCount(ctx: OperatorCtx): Promise<number> {
  return deadCount(ctx.deps.db.writes);
}

/** Puts dead-lettered index work back into the outbox: one row (`id`), or all; how many. */
export function retryDeadIndexWork(ctx: OperatorCtx, id?: number): Promise<number> {
  return retryDeadRows(ctx.deps.db, id);
}
