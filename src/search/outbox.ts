/**
 * The worker's view of the outbox store (src/data/outbox.ts) until its statements move there.
 */
import type { Pool } from 'mariadb';
import * as store from '../data/outbox';
import { sqlOn } from '../data/sql';

export type { OutboxOp } from '../domain/index-work';

export const buryDeadRows = (c: { query: Pool['query'] }, ids: number[]) => store.buryDeadRows(sqlOn(c), ids);
export const deadCount = (c: { query: Pool['query'] }) => store.deadCount(sqlOn(c));
