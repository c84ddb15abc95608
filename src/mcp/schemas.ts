/**
 * Input and output schemas of the MCP tools (zod; the SDK publishes them as JSON Schema in
 * tools/list and checks every call's arguments and every result against them). Messages say what
 * is wrong in words an agent can act on.
 */
import { z } from 'zod';
import { Project, Session, SessionUsage } from '../api/schemas/resources';
import type { Bound } from '../domain/pages';
import { BUDGET } from './text';

export const int = (name: string, min: number, max: number) =>
  z
    .number({ error: `${name} must be an integer from ${min} to ${max}` })
    .int({ error: `${name} must be an integer from ${min} to ${max}` })
    .min(min, { error: `${name} must be an integer from ${min} to ${max}` })
    .max(max, { error: `${name} must be an integer from ${min} to ${max}` });

/** An optional page size within `bound`, its range and default stated after `what`. */
export const pageSize = (name: string, bound: Bound, what: string) =>
  int(name, bound.min, bound.max).optional().describe(`${what} (${bound.min}-${bound.max}, default ${bound.def}).`);

export const words = (name: string, what: string) =>
  z
    .array(z.string().min(1).max(255), { error: `${name} must be a list of strings` })
    .max(100, { error: `${name}: at most 100 values` })
    .optional()
    .describe(what);

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const dateText = (name: string, what: string) =>
  z
    .string()
    .refine((s) => !Number.isNaN(Date.parse(s)), { error: `${name} must be an ISO 8601 date (2026-01-31) or time (2026-01-31T12:00:00Z)` })
    .optional()
    .describe(what);

export const from = dateText('from', 'Only sessions created at or after this date or time (ISO 8601; a date is that day 00:00 UTC).');
export const to = dateText('to', 'Only sessions created at or before this date or time (ISO 8601; a date is that whole day, UTC).');

/** `from`/`to` as the services' dateRange. */
export function dateRange(f?: string, t?: string) {
  if (!f && !t) return undefined;
  return {
    start: f ? new Date(DAY.test(f) ? `${f}T00:00:00.000Z` : f).toISOString() : null,
    end: t ? new Date(DAY.test(t) ? `${t}T23:59:59.999Z` : t).toISOString() : null,
  };
}

export const projectId = z
  .string({ error: 'projectId is required' })
  .min(1, { error: 'projectId is required' })
  .max(128)
  .describe('The project id (from list_projects or a search result).');
export const sessionId = z.string({ error: 'sessionId is required' }).min(1, { error: 'sessionId is required' }).max(64).describe('The session id (a UUID).');
export const cursor = z.string().max(2048).optional().describe('nextCursor of the previous page, with the same other arguments.');
export const maxChars = int('maxChars', BUDGET.min, BUDGET.max).optional().describe(`Budget of transcript characters in the answer (default ${BUDGET.def}).`);

export const exchangeRef = z.object({ number: z.number().int(), title: z.string(), snippet: z.string() });
export const url = z.string().describe('The console page that shows it.');
export const nextCursor = z.string().nullable().describe('Pass it as cursor for the next page; null at the end.');

// ---------------------------------------------------------------------------------------------
// Output shapes derived from REST's schemas (src/api/schemas): a field added to a session or a
// project there is in these too, unless it is listed below as left out.

/**
 * Fields of REST's `Session` that get_session leaves out: `id` is named `sessionId` here (as in
 * every other tool), and `clientId` is the upload CLI's copy of it.
 */
export const SESSION_LEFT_OUT = { id: true, clientId: true } as const;

/** A session as get_session (and the session resource) shows it: REST's `Session` with the tools' names and links. */
export const sessionOutput = Session.omit(SESSION_LEFT_OUT).extend({
  sessionId: Session.shape.id,
  title: z.string().describe("The display title: the user's title, else the client's, else the name."),
  projectName: z.string().nullable(),
  etag: z.string(),
  url,
  totalExchanges: z.number().int(),
  exchanges: z.array(z.object({ number: z.number().int(), title: z.string(), size: z.number().int() })),
});

export const sessionUsage = SessionUsage.describe(
  'Tokens and USD per model, read from the raw log; costUsd null where the price table has no price. Null when the log records no usage.',
);

/** A row of list_sessions: some of REST's `Session` fields, and what a list shows of its metadata. */
export const sessionListItem = Session.pick({ projectId: true, createdAt: true, updatedAt: true, markdownSize: true }).extend({
  sessionId: Session.shape.id,
  title: z.string(),
  llmModels: z.array(z.string()),
  tags: z.array(z.string()),
  url,
});

/** A row of list_projects: some of REST's `Project` fields. */
export const projectListItem = Project.pick({ id: true, name: true, owner: true, sessionCount: true, lastActivity: true }).extend({ url });
