/**
 * Input and output schemas of the MCP tools (zod; the SDK publishes them as JSON Schema in
 * tools/list and checks every call's arguments and every result against them). Messages say what
 * is wrong in words an agent can act on.
 */
import { z } from 'zod';
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

export const owner = z.object({ type: z.enum(['user', 'team']), id: z.string(), name: z.string().nullable() });
export const exchangeRef = z.object({ number: z.number().int(), title: z.string(), snippet: z.string() });
export const url = z.string().describe('The console page that shows it.');
export const nextCursor = z.string().nullable().describe('Pass it as cursor for the next page; null at the end.');
