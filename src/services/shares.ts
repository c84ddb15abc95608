/**
 * Share links: one session, read-only, to someone outside the archive, showing only what its
 * creator chose. A link shows a snapshot taken when it was made (or refreshed); exchanges the
 * creator hides are never copied into it. Who may share: whoever may change the session (the
 * write rule in access.ts), checked when the link is made and again on every read.
 */
import crypto from 'node:crypto';
import { AppError, invalid } from '../errors';
import { addFindings, redact, type Findings } from '../redact';
import * as store from '../data/shares';
import type { ShareListRow, ShareState, SnapshotExchange } from '../data/shares';
import { inTransaction, type Tx } from '../data/transaction';
import { newShareNonce, shareTokenOf, verifyShareToken } from '../domain/share-token';
import { mayChangeSession, requireWritableSession } from './access';
import { recordAudit } from './audit';
import { onSnapshot, type Ctx, type Deps, type PublicCtx } from './context';
import { exchangePage } from './exchanges';
import { metadataOf, sessionTitle } from './sessions';
import type { SessionRow } from '../domain/session-row';
import { presentShare, type Audience, type ShareDto } from './presenters/share';
import { CreateShareInput, SHARE_INPUT_MESSAGES, UpdateShareInput } from './share-inputs';
import { parseInput } from '../domain/inputs';
import { shareChanged } from './webhook-events';

export const DEFAULT_EXPIRY_DAYS = 30;
/** A page of a share carries at most this much markdown (at least one exchange). */
export const SHARE_PAGE_BYTES = 8 * 1024 * 1024;
export const SHARE_PAGE_DEFAULT_LIMIT = 50;
export const SHARE_PAGE_MAX_LIMIT = 500;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const COPY_BATCH = 200;

export const SHARE_MESSAGES = {
  notFound: 'Share link not found',
  off: 'Share links are turned off on this server',
  publicOff: 'Public links are turned off on this server: audience must be signed-in',
  ...SHARE_INPUT_MESSAGES,
  never: 'Links that never expire are turned off on this server: expiresInDays must be 1, 7, 30 or 90',
  secrets: 'Session holds unmasked secrets',
  signIn: 'Sign in to view this shared session',
} as const;

const shareNotFound = () => new AppError('NOT_FOUND', SHARE_MESSAGES.notFound);

function toShare(deps: Deps, base: string, row: ShareListRow): ShareDto {
  return presentShare(row, `${base}/s/${shareTokenOf(deps.config.shareLinkSecret, row.nonce)}`);
}

// ---------------------------------------------------------------------------------------------
// Inputs

/** Days from now, or null for never; `undefined` stays undefined (not given). */
function expiryOf(deps: Deps, v: number | null | undefined): Date | null | undefined {
  if (v === undefined) return undefined;
  if (v === null) {
    if (!deps.config.sharesAllowNever) throw invalid(SHARE_MESSAGES.never);
    return null;
  }
  return new Date(Date.now() + v * 86_400_000);
}

/** The hidden numbers asked for, each within the session's `exchangeCount` exchanges. */
function hiddenOf(v: number[] | undefined, exchangeCount: number): number[] | undefined {
  const beyond = v?.find((n) => n > exchangeCount);
  if (beyond !== undefined) throw invalid(`hiddenExchanges: the session has no exchange ${beyond} (it has ${exchangeCount})`);
  return v;
}

function audienceOf(deps: Deps, v: Audience | undefined): Audience {
  if (v === undefined) return deps.config.shares === 'signed-in' ? 'signed-in' : 'public';
  if (v === 'public' && deps.config.shares === 'signed-in') throw invalid(SHARE_MESSAGES.publicOff);
  return v;
}

function requireSharesOn(deps: Deps): void {
  if (deps.config.shares === 'off') throw new AppError('FORBIDDEN', SHARE_MESSAGES.off);
}

// ---------------------------------------------------------------------------------------------
// Snapshots

function secretsRefusal(findings: Findings): AppError {
  const rules = Object.keys(findings).sort();
  return new AppError('CONFLICT', `${SHARE_MESSAGES.secrets} (${rules.join(', ')}): run \`npm run cli -- redact rescan\` with REDACT_SECRETS=on to mask them`, {
    rules,
  });
}

function scan(findings: Findings, text: string | null): void {
  if (!text) return;
  const r = redact(text);
  if (r.count) addFindings(findings, r.findings);
}

/**
 * Copies the session's current exchanges into `tx` for `shareId`: every exchange when `only` is
 * absent, else those numbers; hidden ones as rows without content. Every exchange read is
 * scanned for secrets (a session whose stored content still holds any cannot be shared).
 */
interface ExchangeCopy {
  tx: Tx;
  /** Reading through the snapshot `row` was read on. */
  sctx: Ctx;
  row: SessionRow;
  shareId: string;
  hidden: ReadonlySet<number>;
  /** Where the secrets found are added. */
  findings: Findings;
  /** The exchange numbers to copy; absent: all. */
  only?: ReadonlySet<number>;
}

async function copyExchanges({ tx, sctx, row, shareId, hidden, findings, only }: ExchangeCopy): Promise<number> {
  let offset = 0;
  let total = 0;
  for (;;) {
    const page = await exchangePage(sctx, row, { offset, limit: COPY_BATCH, content: true });
    total = page.total;
    const batch: SnapshotExchange[] = [];
    for (const e of page.exchanges) {
      if (!only) scan(findings, e.markdown ?? '');
      if (only && !only.has(e.number)) continue;
      if (only) scan(findings, e.markdown ?? '');
      const hide = hidden.has(e.number);
      batch.push({ number: e.number, title: hide ? null : e.title, size: e.size, markdown: hide ? null : (e.markdown ?? '') });
    }
    await store.insertSnapshotExchanges(tx, shareId, batch);
    if (page.nextOffset === null) break;
    offset = page.nextOffset;
  }
  return total;
}

const titleOf = (row: SessionRow) => sessionTitle(row).slice(0, 255);

function snapshotFields(row: SessionRow) {
  return {
    title: titleOf(row),
    sessionCreatedAt: row.createdAt,
    agentName: row.agentName,
    llmModelsJson: JSON.stringify(metadataOf(row).llmModels ?? []),
  };
}

// ---------------------------------------------------------------------------------------------
// Manage

export async function createShare(ctx: Ctx, base: string, projectId: string, sessionId: string, input: unknown): Promise<ShareDto> {
  requireSharesOn(ctx.deps);
  const body = parseInput(CreateShareInput, input ?? {});
  const expiry = expiryOf(ctx.deps, body.expiresInDays);
  const expiresAt = expiry === undefined ? new Date(Date.now() + DEFAULT_EXPIRY_DAYS * 86_400_000) : expiry;
  const audience = audienceOf(ctx.deps, body.audience);
  const id = crypto.randomUUID();
  await onSnapshot(ctx, async (sctx) => {
    const row = await requireWritableSession(sctx, projectId, sessionId, 'share');
    await inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
      const now = new Date();
      // The row first (the snapshot rows refer to it); its count is set once the copy knows it.
      await store.insertShare(tx, {
        id,
        nonce: newShareNonce(),
        projectId: row.projectId,
        sessionId: row.id,
        createdBy: ctx.user.id,
        createdAt: now,
        snapshotAt: now,
        expiresAt,
        audience,
        hiddenJson: '[]',
        exchangeCount: 0,
        ...snapshotFields(row),
      });
      const findings: Findings = {};
      scan(findings, titleOf(row));
      // Hidden numbers are checked against the session's exchanges once they are known.
      const requested = body.hiddenExchanges;
      const pre = hiddenOf(requested, Number.MAX_SAFE_INTEGER) ?? [];
      const count = await copyExchanges({ tx, sctx, row, shareId: id, hidden: new Set(pre), findings });
      if (Object.keys(findings).length) throw secretsRefusal(findings);
      const hidden = hiddenOf(requested, count) ?? [];
      await store.updateShareRow(tx, id, { exchangeCount: count, hiddenJson: JSON.stringify(hidden) });
      const detail = { session: row.id, audience, hidden: hidden.length };
      await recordAudit(ctx, { action: 'share.create', target: { type: 'share', id }, projectId: row.projectId, detail }, tx);
      await shareChanged(tx, ctx.deps.config, 'share.created', (await store.shareStateById(tx, id))!);
    });
  });
  return shareById(ctx, base, id);
}

async function shareById(ctx: Ctx, base: string, id: string): Promise<ShareDto> {
  const rows = await store.sharesOfUser(ctx.deps.db.writes, ctx.user.id);
  const row = rows.find((r) => r.id === id);
  if (!row) throw shareNotFound();
  return toShare(ctx.deps, base, row);
}

export async function listSessionShares(ctx: Ctx, base: string, projectId: string, sessionId: string): Promise<ShareDto[]> {
  const row = await requireWritableSession(ctx, projectId, sessionId, 'share');
  return (await store.sharesOfSession(ctx.deps.db.reads, ctx.user.id, row.projectId, row.id)).map((r) => toShare(ctx.deps, base, r));
}

/**
 * The caller's links of several sessions, read in one statement, keyed `${projectId}/${sessionId}`
 * (lower-case id): GraphQL's Session.shares for a list of sessions. Only links the caller made are
 * read, so no access check is needed beyond the one that gave the caller the sessions.
 */
export async function sharesOfSessions(
  ctx: Ctx,
  base: string,
  keys: ReadonlyArray<{ projectId: string; sessionId: string }>,
): Promise<Map<string, ShareDto[]>> {
  const out = new Map<string, ShareDto[]>();
  for (const r of await store.sharesOfSessions(ctx.deps.db.reads, ctx.user.id, keys)) {
    const k = `${r.projectId}/${r.sessionId}`;
    const list = out.get(k) ?? [];
    list.push(toShare(ctx.deps, base, r));
    out.set(k, list);
  }
  return out;
}

export async function listShares(ctx: Ctx, base: string): Promise<ShareDto[]> {
  return (await store.sharesOfUser(ctx.deps.db.reads, ctx.user.id)).map((r) => toShare(ctx.deps, base, r));
}

/** The caller's own share (another user's or an unknown id → the same 404). */
async function ownShare(ctx: Ctx, shareId: string): Promise<ShareState> {
  if (typeof shareId !== 'string' || !UUID_RE.test(shareId)) throw shareNotFound();
  const state = await store.shareStateById(ctx.deps.db.writes, shareId.toLowerCase());
  if (!state || state.createdBy !== ctx.user.id) throw shareNotFound();
  return state;
}

export async function updateShare(ctx: Ctx, base: string, shareId: string, input: unknown): Promise<ShareDto> {
  requireSharesOn(ctx.deps);
  const body = parseInput(UpdateShareInput, input ?? {});
  const expiry = expiryOf(ctx.deps, body.expiresInDays);
  const state = await ownShare(ctx, shareId);
  await onSnapshot(ctx, async (sctx) => {
    // Still allowed to share this session (the write rule, as now).
    const row = await requireWritableSession(sctx, state.projectId, state.sessionId, 'share');
    await inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
      const findings: Findings = {};
      let count = state.exchangeCount;
      const before = new Set(JSON.parse(state.hiddenJson) as number[]);
      if (body.refresh === true) {
        const hidden = hiddenOf(body.hiddenExchanges, Number.MAX_SAFE_INTEGER) ?? [...before];
        await store.deleteSnapshotExchanges(tx, state.id);
        scan(findings, titleOf(row));
        count = await copyExchanges({ tx, sctx, row, shareId: state.id, hidden: new Set(hidden), findings });
        const kept = hiddenOf(body.hiddenExchanges, count) ?? hidden.filter((n) => n <= count);
        await store.updateShareRow(tx, state.id, { ...snapshotFields(row), snapshotAt: new Date(), exchangeCount: count, hiddenJson: JSON.stringify(kept) });
      } else if (body.hiddenExchanges !== undefined) {
        const hidden = hiddenOf(body.hiddenExchanges, count)!;
        const now = new Set(hidden);
        await store.hideSnapshotExchanges(
          tx,
          state.id,
          hidden.filter((n) => !before.has(n)),
        );
        // Un-hidden exchanges the snapshot never held: their current content is copied in.
        const shown = [...before].filter((n) => !now.has(n));
        const held = await store.heldNumbers(tx, state.id);
        const missing = new Set(shown.filter((n) => !held.has(n)));
        if (missing.size) await copyExchanges({ tx, sctx, row, shareId: state.id, hidden: now, findings, only: missing });
        await store.updateShareRow(tx, state.id, { hiddenJson: JSON.stringify(hidden) });
      }
      if (Object.keys(findings).length) throw secretsRefusal(findings);
      if (expiry !== undefined) await store.updateShareRow(tx, state.id, { expiresAt: expiry });
    });
  });
  return shareById(ctx, base, state.id);
}

export async function deleteShare(ctx: Ctx, shareId: string): Promise<void> {
  const state = await ownShare(ctx, shareId);
  const event = { action: 'share.revoke', target: { type: 'share', id: state.id }, projectId: state.projectId, detail: { session: state.sessionId } } as const;
  await inTransaction(ctx.deps.db, ctx.guard, async (tx) => {
    await store.deleteShareRow(tx, state.id);
    await recordAudit(ctx, event, tx);
    await shareChanged(tx, ctx.deps.config, 'share.revoked', state);
  });
}

// ---------------------------------------------------------------------------------------------
// Reading a link

/** An exchange the link shows, or one it hides (its number only). */
export type SharedExchange = { number: number; title: string; markdown: string } | { number: number; hidden: true };

export interface SharedSession {
  title: string;
  createdAt: string;
  sharedAt: string;
  agentName: string | null;
  llmModels: string[];
  exchangeCount: number;
  hiddenCount: number;
  /** The first exchange number of this page. */
  from: number;
  /** Where the next page starts, or null at the end. */
  nextFrom: number | null;
  exchanges: SharedExchange[];
}

export interface ShareReadOptions {
  from: number;
  limit: number;
  /** Whether this read counts as a view (the page, or the API's first page). */
  countView: boolean;
  /** Whether the reader is signed in (asked only for `signed-in` links). */
  signedIn: () => Promise<boolean>;
  /** Markdown bytes this page may carry (at least one exchange); SHARE_PAGE_BYTES when absent. */
  maxBytes?: number;
}

/**
 * A live share for `token`, or the one 404 for every kind of dead or unknown link. The MAC is
 * checked before anything is read; the link's state is read with what can end it (its session,
 * project owner, creator's account and role) in one statement.
 */
export async function liveShare(ctx: PublicCtx, token: string, signedIn: () => Promise<boolean>): Promise<ShareState> {
  const { deps } = ctx;
  const nonce = verifyShareToken(deps.config.shareLinkSecret, token);
  if (!nonce || deps.config.shares === 'off') throw shareNotFound();
  const state = await store.shareStateByNonce(deps.db.reads, nonce);
  if (!state) throw shareNotFound();
  if (state.expiresAt && state.expiresAt.getTime() <= Date.now()) throw shareNotFound();
  if (state.creatorDisabledAt) throw shareNotFound();
  if (!mayChangeSession(state, state.createdBy, state.creatorTeamRole)) throw shareNotFound();
  const audience = deps.config.shares === 'signed-in' ? 'signed-in' : state.audience;
  if (audience !== 'public' && !(await signedIn())) throw new AppError('UNAUTHENTICATED', SHARE_MESSAGES.signIn);
  return state;
}

export function parseSharePaging(query: Record<string, unknown>): { from: number; limit: number } {
  const num = (name: string, v: unknown, dflt: number, max: number): number => {
    if (v === undefined) return dflt;
    if (typeof v !== 'string' || !/^\d{1,9}$/.test(v) || Number(v) < 1 || Number(v) > max) throw invalid(`${name} must be an integer from 1 to ${max}`);
    return Number(v);
  };
  return { from: num('from', query.from, 1, 1_000_000_000), limit: num('limit', query.limit, SHARE_PAGE_DEFAULT_LIMIT, SHARE_PAGE_MAX_LIMIT) };
}

/** A page of a shared session, read by anyone holding the link (signed in or not: the link's audience decides). */
export async function readShare(ctx: PublicCtx, token: string, opts: ShareReadOptions): Promise<SharedSession> {
  const { deps } = ctx;
  const state = await liveShare(ctx, token, opts.signedIn);
  const sizes = await store.snapshotSizes(deps.db.reads, state.id, opts.from, opts.limit);
  const budget = Math.min(opts.maxBytes ?? SHARE_PAGE_BYTES, SHARE_PAGE_BYTES);
  let bytes = 0;
  let last = -1;
  for (const s of sizes) {
    const size = s.hidden ? 0 : s.size;
    if (last !== -1 && bytes + size > budget) break;
    bytes += size;
    last = s.number;
  }
  const rows = last === -1 ? [] : await store.snapshotRange(deps.db.reads, state.id, opts.from, last);
  const exchanges: SharedExchange[] = rows.map((r) =>
    r.markdown === null ? { number: r.number, hidden: true } : { number: r.number, title: r.title ?? '', markdown: r.markdown },
  );
  const count = state.exchangeCount;
  const next = last === -1 ? null : last + 1;
  if (opts.countView && opts.from === 1) await store.countView(deps.db.writes, state.id);
  const hidden = JSON.parse(state.hiddenJson) as number[];
  return {
    title: state.title,
    createdAt: state.sessionCreatedAt.toISOString(),
    sharedAt: state.snapshotAt.toISOString(),
    agentName: state.agentName,
    llmModels: JSON.parse(state.llmModelsJson) as string[],
    exchangeCount: count,
    hiddenCount: hidden.filter((n) => n <= count).length,
    from: opts.from,
    nextFrom: next !== null && next <= count ? next : null,
    exchanges,
  };
}
