/**
 * The MCP tools that list and read: list_projects, list_sessions, get_session, read_exchanges,
 * read_raw. Each reads through the same services as REST and GraphQL (and so through their access
 * rule); transcript text is cut to the character budget and pages continue where they stopped.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { PAGES } from '../domain/pages';
import { requireReadableSession } from '../services/access';
import { exchangePage } from '../services/exchanges';
import { listProjects } from '../services/projects';
import { findProjectSessions, getSessionContentRange } from '../services/session-lists';
import { metadataOf, sessionTitle } from '../services/sessions';
import type { SessionRow } from '../domain/session-row';
import { presentSession } from '../services/presenters/session';
import { usageOfSession } from '../services/usage';
import { projectUrl, runTool, seal, sessionUrl, ToolError, unseal, type McpContext } from './context';
import * as S from './schemas';
import { BUDGET, cutChars, utf8End } from './text';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const ORDERS = [
  'UPDATED_AT_DESC',
  'UPDATED_AT_ASC',
  'CREATED_AT_DESC',
  'CREATED_AT_ASC',
  'STARTED_AT_DESC',
  'STARTED_AT_ASC',
  'NAME_ASC',
  'COST_DESC',
  'COST_ASC',
] as const;
/** Table-of-contents entries one get_session answer lists at most (more → nextExchangesFrom). */
const TOC_PAGE = 500;
const RAW = { def: 16_384, max: 65_536 } as const;

/** Keeps the first items whose rendering fits `budget` characters (at least one). */
function fit<T>(items: T[], render: (items: T[]) => string, budget: number): T[] {
  let n = items.length;
  while (n > 1 && render(items.slice(0, n)).length > budget) n = Math.max(1, Math.floor(n * 0.8) < n - 1 ? Math.floor(n * 0.8) : n - 1);
  return items.slice(0, n);
}

/** A session the caller can read (another user's reads as not found), with its table of contents. */
async function sessionWithToc(m: McpContext, projectId: string, sessionId: string, from = 1) {
  const row = await requireReadableSession(m.ctx, projectId, sessionId);
  const page = await exchangePage(m.ctx, row, { offset: from - 1, limit: TOC_PAGE, content: false });
  return { row, page };
}

export function sessionSummary(
  m: McpContext,
  row: SessionRow & { project?: { name: string } },
  toc: { total: number; exchanges: Array<{ number: number; title: string; size: number }> },
): z.input<typeof S.sessionOutput> {
  // `id` and `clientId` are left out (S.SESSION_LEFT_OUT): `sessionId` names the session.
  const { id, clientId, ...session } = presentSession(row);
  return {
    ...session,
    sessionId: row.id,
    title: sessionTitle(row),
    projectName: row.project?.name ?? null,
    etag: row.etag,
    url: sessionUrl(m, row.projectId, row.id),
    totalExchanges: toc.total,
    exchanges: toc.exchanges.map((e) => ({ number: e.number, title: e.title, size: e.size })),
  };
}

const LIST_PROJECTS = {
  title: 'List projects',
  description: "The projects you can read (yours and your teams'), most recent activity first, with session counts and console links.",
  inputSchema: z.object({ limit: S.int('limit', 1, 100).optional().describe('Projects per page (1-100, default 50).'), cursor: S.cursor }),
  outputSchema: z.object({
    projects: z.array(S.projectListItem),
    nextCursor: S.nextCursor,
  }),
  annotations: READ_ONLY,
};

const LIST_SESSIONS = {
  title: 'List sessions',
  description:
    'Sessions you can read, in one project or all, filtered by model, tag and creation date, in the order asked (default most recently updated first).',
  inputSchema: z.object({
    projectId: S.projectId.optional(),
    order: z
      .enum(ORDERS, { error: `order must be one of ${ORDERS.join(', ')}` })
      .optional()
      .describe('Default UPDATED_AT_DESC.'),
    limit: S.int('limit', 1, 50).optional().describe('Sessions per page (1-50, default 20).'),
    cursor: S.cursor,
    models: S.words('models', 'Only sessions that used any of these models.'),
    tags: S.words('tags', 'Only sessions with any of these tags.'),
    from: S.from,
    to: S.to,
  }),
  outputSchema: z.object({
    sessions: z.array(S.sessionListItem),
    nextCursor: S.nextCursor,
  }),
  annotations: READ_ONLY,
};

const GET_SESSION = {
  title: 'Get a session',
  description:
    "A session's metadata (title, times, models, tags, branches, sizes, redactions, etag), what it cost (tokens and USD per model, read from its raw log; null when the log records none) and its table of contents: the exchanges (a user turn and the answers to it) with number, title and size. Read them with read_exchanges.",
  inputSchema: z.object({
    projectId: S.projectId,
    sessionId: S.sessionId,
    exchangesFrom: S.int('exchangesFrom', 1, 10_000_000).optional().describe('First table-of-contents entry to list (default 1); see nextExchangesFrom.'),
  }),
  outputSchema: S.sessionOutput.extend({
    usage: S.sessionUsage,
    nextExchangesFrom: z.number().int().nullable().describe('Pass it as exchangesFrom for the rest of the table of contents; null when complete.'),
  }),
  annotations: READ_ONLY,
};

const READ_EXCHANGES = {
  title: 'Read exchanges',
  description:
    "The markdown of a session's exchanges, from exchange `from`, `count` of them, within the character budget; an exchange cut to fit says truncated. Continue with from = nextFrom.",
  inputSchema: z.object({
    projectId: S.projectId,
    sessionId: S.sessionId,
    from: S.int('from', 1, 10_000_000).optional().describe('First exchange (default 1).'),
    count: S.pageSize('count', PAGES.mcpExchanges, 'Exchanges to read'),
    maxChars: S.maxChars,
  }),
  outputSchema: z.object({
    exchanges: z.array(z.object({ number: z.number().int(), title: z.string(), markdown: z.string(), truncated: z.boolean() })),
    total: z.number().int(),
    nextFrom: z.number().int().nullable().describe('Pass it as from to continue; null at the end.'),
    etag: z.string(),
    url: S.url,
  }),
  annotations: READ_ONLY,
};

const READ_RAW = {
  title: 'Read the raw log',
  description:
    "A page of the session's raw agent log (as the client uploaded it): `length` bytes from byte `offset`, cut on a character boundary. Continue with offset = nextOffset; pages concatenate to the stored bytes.",
  inputSchema: z.object({
    projectId: S.projectId,
    sessionId: S.sessionId,
    offset: S.int('offset', 0, Number.MAX_SAFE_INTEGER).optional().describe('Byte offset (default 0).'),
    length: S.int('length', 1, RAW.max).optional().describe(`Bytes to read (1-${RAW.max}, default ${RAW.def}).`),
  }),
  outputSchema: z.object({
    text: z.string().describe('The bytes as UTF-8 text; base64 when encoding says so (the page is not valid UTF-8).'),
    encoding: z.enum(['utf8', 'base64']),
    offset: z.number().int(),
    nextOffset: z.number().int().nullable().describe('Pass it as offset to continue; null at the end.'),
    totalSize: z.number().int(),
    etag: z.string(),
  }),
  annotations: READ_ONLY,
};

export function registerReadTools(server: McpServer, m: McpContext): void {
  server.registerTool('list_projects', LIST_PROJECTS, (args) =>
    runTool(m, args, async (m) => {
      const limit = args.limit ?? 50;
      const at = args.cursor ? Number(unseal(m, 'list_projects', {}, args.cursor)) : 0;
      const all = await listProjects(m.ctx);
      const items = all
        .slice(at, at + limit)
        .map((p) => ({ id: p.id, name: p.name, owner: p.owner, sessionCount: p.sessionCount, lastActivity: p.lastActivity, url: projectUrl(m, p.id) }));
      const render = (list: typeof items) =>
        list.map((p) => `- ${p.name} (id ${p.id}): ${p.sessionCount} sessions, last activity ${p.lastActivity}`).join('\n');
      const kept = fit(items, render, BUDGET.def);
      const next = at + kept.length < all.length ? seal(m, 'list_projects', {}, at + kept.length) : null;
      return { structured: { projects: kept, nextCursor: next }, text: `${render(kept) || 'No projects.'}${next ? '\n(more: pass nextCursor)' : ''}` };
    }),
  );

  server.registerTool('list_sessions', LIST_SESSIONS, (args) =>
    runTool(m, args, async (m) => {
      const { cursor, limit = 20, ...filters } = args;
      const order = args.order ?? 'UPDATED_AT_DESC';
      const page = await findProjectSessions(m.ctx, args.projectId, {
        filters: { llmModels: args.models, tags: args.tags, dateRange: S.dateRange(args.from, args.to) },
        order,
        limit,
        after: () => (cursor ? String(unseal(m, 'list_sessions', filters, cursor)) : null),
      });
      const items = page.rows.map((r) => {
        const meta = metadataOf(r);
        return {
          projectId: r.projectId,
          sessionId: r.id,
          title: sessionTitle(r),
          createdAt: r.createdAt.toISOString(),
          updatedAt: r.updatedAt.toISOString(),
          llmModels: meta.llmModels,
          tags: meta.tags,
          markdownSize: r.markdownSize,
          url: sessionUrl(m, r.projectId, r.id),
        };
      });
      const next = page.nextCursor ? seal(m, 'list_sessions', filters, page.nextCursor) : null;
      const text = items.map((s) => `- ${s.title} (project ${s.projectId}, session ${s.sessionId}, updated ${s.updatedAt})`).join('\n');
      return {
        structured: { sessions: items, nextCursor: next },
        text: `${cutChars(text, BUDGET.def - 40) || 'No sessions.'}${next ? '\n(more: pass nextCursor)' : ''}`,
      };
    }),
  );

  server.registerTool('get_session', GET_SESSION, (args) =>
    runTool(m, args, async (m) => {
      const { row, page } = await sessionWithToc(m, args.projectId, args.sessionId, args.exchangesFrom ?? 1);
      const base = sessionSummary(m, row, page);
      const usage = await usageOfSession(m.ctx, { projectId: row.projectId, sessionId: row.id });
      const render = (list: typeof base.exchanges) => list.map((e) => `${e.number}. ${e.title} (${e.size} bytes)`).join('\n');
      const cost = usage ? `${usage.totalTokens} tokens, ${usage.costUsd === null ? 'cost unknown' : `$${usage.costUsd.toFixed(4)}`}\n` : '';
      const head = `${base.title}\nproject ${row.projectId}, session ${row.id}, ${base.totalExchanges} exchanges, updated ${base.updatedAt}\n${cost}${base.url}\n`;
      const kept = base.exchanges.length ? fit(base.exchanges, render, BUDGET.def - head.length - 200) : [];
      const last = kept.length ? kept[kept.length - 1].number : (args.exchangesFrom ?? 1) - 1;
      const nextExchangesFrom = last < page.total ? last + 1 : null;
      return {
        structured: { ...base, usage, exchanges: kept, nextExchangesFrom },
        text: `${cutChars(head, 2000)}${render(kept)}${nextExchangesFrom ? `\n(more: exchangesFrom ${nextExchangesFrom})` : ''}`,
      };
    }),
  );

  server.registerTool('read_exchanges', READ_EXCHANGES, (args) =>
    runTool(m, args, async (m) => {
      const from = args.from ?? 1;
      const budget = args.maxChars ?? BUDGET.def;
      const row = await requireReadableSession(m.ctx, args.projectId, args.sessionId);
      const page = await exchangePage(m.ctx, row, { offset: from - 1, limit: args.count ?? PAGES.mcpExchanges.def, content: true });
      if (from > page.total) throw new ToolError(`from must be at most ${page.total}: the session has ${page.total} exchanges`);
      const out: Array<{ number: number; title: string; markdown: string; truncated: boolean }> = [];
      let left = budget;
      for (const e of page.exchanges) {
        // Headings of the text rendering take a little of the budget too.
        const room = left - e.title.length - 40;
        if (out.length > 0 && room < Math.min(e.markdown!.length, 500)) break;
        const markdown = cutChars(e.markdown!, Math.max(0, room));
        out.push({ number: e.number, title: e.title, markdown, truncated: markdown.length < e.markdown!.length });
        left -= markdown.length + e.title.length + 40;
        if (markdown.length < e.markdown!.length) break;
      }
      const last = out[out.length - 1].number;
      const nextFrom = last < page.total ? last + 1 : null;
      const text = out.map((e) => `## Exchange ${e.number}: ${e.title}${e.truncated ? ' (truncated)' : ''}\n\n${e.markdown}`).join('\n\n');
      return {
        structured: { exchanges: out, total: page.total, nextFrom, etag: row.etag, url: sessionUrl(m, row.projectId, row.id, from) },
        text: cutChars(text, budget),
      };
    }),
  );

  server.registerTool('read_raw', READ_RAW, (args) =>
    runTool(m, args, async (m) => {
      const offset = args.offset ?? 0;
      const length = args.length ?? RAW.def;
      const row = await requireReadableSession(m.ctx, args.projectId, args.sessionId);
      const total = row.rawDataSize;
      if (offset > total) throw new ToolError(`offset must be at most ${total} (the raw log's size in bytes)`);
      // Three bytes more than asked: enough to see whether the page's end splits a character.
      const buf = await getSessionContentRange(m.ctx, row, 'raw', offset, Math.min(total, offset + length + 3));
      if (buf.length > 0 && (buf[0] & 0xc0) === 0x80) throw new ToolError('offset is inside a character: use 0 or a nextOffset');
      let end = Math.min(buf.length, length);
      if (end < buf.length) end = utf8End(buf, end);
      const bytes = buf.subarray(0, end);
      let text: string;
      let encoding: 'utf8' | 'base64' = 'utf8';
      try {
        text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
      } catch {
        text = bytes.toString('base64');
        encoding = 'base64';
      }
      const next = offset + end < total ? offset + end : null;
      const head = `[bytes ${offset}-${offset + end} of ${total}${encoding === 'base64' ? ', base64' : ''}; ${next === null ? 'end of the log' : `next offset ${next}`}]\n`;
      return { structured: { text, encoding, offset, nextOffset: next, totalSize: total, etag: row.etag }, text: head + text };
    }),
  );
}
