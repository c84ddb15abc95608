/**
 * Reading the audit log (instance administrators: every entry; a team's admins: their teams'
 * entries; anyone else 403), its export as JSON lines, and its retention: entries older than
 * AUDIT_RETENTION_DAYS are pruned hourly by whichever instance takes the named lock.
 */
import { listAuditEntries, pruneAuditEntries, type AuditFilter } from '../data/audit';
import { tryNamedLock } from '../data/locks';
import type { DbHandles } from '../db/client';
import { PAGES } from '../domain/pages';
import { AppError, invalid } from '../errors';
import type { Logger } from '../logger';
import { memberships } from './access';
import type { Ctx } from './context';
import { queryInteger } from './inputs';
import { parseInput } from '../domain/inputs';
import { hourly } from './hourly';
import { presentAuditEntry, type AuditEntryDto } from './presenters/audit';
import { z } from 'zod';

export const AUDIT_FORBIDDEN = "Only the service's administrators and team admins can read the audit log";

const text = (field: string, max: number) =>
  z
    .string({ error: `Invalid value for ${field}: must be given once` })
    .min(1, { error: `Invalid value for ${field}: must not be empty` })
    .max(max, { error: `Invalid value for ${field}: at most ${max} characters` })
    .optional();
const time = (field: string) =>
  z.iso
    .datetime({ offset: true, error: `Invalid value for ${field}: must be an ISO 8601 timestamp (2026-01-15T10:30:00Z)` })
    .optional()
    .transform((v) => (v === undefined ? undefined : new Date(v)));

/** The filters of GET /audit and its export (all optional; they intersect). */
export const AuditFilterQuery = z.object({
  actor: text('actor', 320).meta({ description: "The actor's user id or label (an email, `operator`, `anonymous`)." }),
  action: text('action', 64).meta({ description: 'One action (`sign_in`, `key.create`, …).' }),
  targetType: text('targetType', 32).meta({ description: '`user`, `key`, `device`, `team`, `project`, `share`, …' }),
  targetId: text('targetId', 320),
  teamId: text('teamId', 36).meta({ description: "Only this team's entries (a team admin: one of their teams)." }),
  result: z.enum(['success', 'failure'], { error: 'Invalid value for result: must be success or failure' }).optional(),
  from: time('from').meta({ description: 'Entries at or after this time.' }),
  to: time('to').meta({ description: 'Entries before this time.' }),
});

export const AuditQuery = AuditFilterQuery.extend({
  limit: queryInteger('limit', PAGES.audit).meta({ description: 'Entries per page.' }),
  cursor: z.string({ error: 'Invalid cursor' }).min(1, { error: 'Invalid cursor' }).optional().meta({ description: '`nextCursor` of the previous page.' }),
});

const encodeCursor = (id: number) => Buffer.from(`a:${id}`, 'utf8').toString('base64url');
function decodeCursor(cursor: string): number {
  const m = /^a:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw invalid('Invalid cursor');
  return Number(m[1]);
}

/** What the caller may read, with their filters: every entry (an administrator) or their admin teams'. */
async function filterFor(ctx: Ctx, q: z.infer<typeof AuditFilterQuery>): Promise<AuditFilter> {
  const { teamId, from, to, ...rest } = q;
  const filter: AuditFilter = { ...rest, from, to };
  if (ctx.user.role === 'admin') {
    if (teamId) filter.teamIds = [teamId];
    return filter;
  }
  const adminOf = (await memberships(ctx)).filter((m) => m.role === 'admin').map((m) => m.teamId);
  if (adminOf.length === 0 || (teamId && !adminOf.includes(teamId))) throw new AppError('FORBIDDEN', AUDIT_FORBIDDEN);
  filter.teamIds = teamId ? [teamId] : adminOf;
  return filter;
}

/** One page of entries, newest first. */
export async function listAudit(ctx: Ctx, query: unknown): Promise<{ entries: AuditEntryDto[]; nextCursor: string | null }> {
  const { limit, cursor, ...q } = parseInput(AuditQuery, query);
  const filter = await filterFor(ctx, q);
  if (cursor) filter.beforeId = decodeCursor(cursor);
  const rows = await listAuditEntries(ctx.deps.db.reads, filter, limit + 1);
  const page = rows.slice(0, limit);
  return { entries: page.map(presentAuditEntry), nextCursor: rows.length > limit ? encodeCursor(page[page.length - 1].id) : null };
}

const EXPORT_BATCH = 500;

/**
 * Every entry the caller may read under the filters, newest first, in batches: each batch is one
 * short statement, so no connection is held while the reader takes the lines. Checks the caller
 * and the filters (throwing 400 / 403) before it returns, so a door can answer an error before
 * the first byte. Entries written while it runs are not included (it reads below the first id).
 */
export async function exportAudit(ctx: Ctx, query: unknown): Promise<AsyncGenerator<AuditEntryDto[]>> {
  const filter = await filterFor(ctx, parseInput(AuditFilterQuery, query));
  const first = await listAuditEntries(ctx.deps.db.reads, filter, EXPORT_BATCH);
  async function* batches(): AsyncGenerator<AuditEntryDto[]> {
    let rows = first;
    while (rows.length > 0) {
      yield rows.map(presentAuditEntry);
      if (rows.length < EXPORT_BATCH) return;
      rows = await listAuditEntries(ctx.deps.db.reads, { ...filter, beforeId: rows[rows.length - 1].id }, EXPORT_BATCH);
    }
  }
  return batches();
}

const PRUNE_BATCH = 5000;

/**
 * Deletes the entries older than `days` (in batches) while holding the named lock, so one
 * instance prunes at a time; null when another holds it.
 */
export async function pruneAudit(db: DbHandles, namespace: string, days: number, now = new Date()): Promise<number | null> {
  const before = new Date(now.getTime() - days * 86_400_000);
  const r = await tryNamedLock(db.pool, `${namespace}:audit-prune`, async (sql) => {
    let total = 0;
    for (;;) {
      const n = await pruneAuditEntries(sql, before, PRUNE_BATCH);
      total += n;
      if (n < PRUNE_BATCH) return total;
    }
  });
  return r.got ? r.value : null;
}

/** Prunes a minute after start and then hourly (src/services/hourly.ts); `stop()` ends it. */
export function startAuditPruner(db: DbHandles, config: { namespace: string; auditRetentionDays: number }, logger: Logger): { stop(): void } {
  return hourly(
    async () => {
      const n = await pruneAudit(db, config.namespace, config.auditRetentionDays);
      if (n) logger.info({ msg: 'audit log pruned', entries: n });
    },
    (err) => logger.error({ err, msg: 'audit prune failed' }),
  );
}
