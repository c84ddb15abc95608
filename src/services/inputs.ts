/**
 * The inputs of both front doors as zod schemas, with one translation to the documented
 * 400 messages: every building block (below, and the shared ones in src/domain/inputs.ts)
 * states its messages, and `parseInput` turns the first problem (fields are checked in the order
 * the schema lists them) into the VALIDATION_ERROR. The same schemas describe the REST API: src/api/schemas/ and
 * src/api/ build GET /api/v1/openapi.json from them. Lengths count Unicode code points
 * (as JSON Schema's minLength/maxLength do), not UTF-16 units.
 */
import { z } from 'zod';
import { body, choiceMessage, parseInput, text, textList, timestamp } from '../domain/inputs';
import { ProjectColor, ProjectIcon } from '../api/schemas/resources';
import { MAX_FILTER_VALUES, normalizeFilters, TIME_FILTERS, type SessionFilters, type SessionFiltersInput } from '../domain/filters';
import { PAGES, type Bound } from '../domain/pages';
import { PROJECT_ID_PATTERN, PROJECT_ID_RE } from '../domain/project';
import { WORD_RE } from '../domain/search-documents';
import { KEY_SCOPES, type KeyScope } from '../domain/scopes';
import { retentionFields } from './retention-inputs';

// ------------------------------------------------------------------------------------------
// Building blocks (the ones the upload body also uses are src/domain/inputs.ts)

/** An optional integer in [min, max]; null is the same as absent. */
function optionalInteger(field: string, min: number, max: number) {
  const typeMessage = `Invalid type for ${field}: expected an integer`;
  return z
    .number({ error: typeMessage })
    .check((ctx) => {
      if (!Number.isInteger(ctx.value)) ctx.issues.push({ code: 'custom', input: ctx.value, message: typeMessage });
      else if (ctx.value < min || ctx.value > max)
        ctx.issues.push({ code: 'custom', input: ctx.value, message: `Invalid value for ${field}: must be between ${min} and ${max}` });
    })
    .nullish()
    .meta({ type: ['integer', 'null'], minimum: min, maximum: max });
}

/** `choice` that may also be null or absent (both mean "not sent"); described as `anyOf: [choice, null]`. */
function optionalChoice<T extends z.ZodEnum>(field: string, schema: T) {
  return z.union([schema, z.null()], { error: choiceMessage(field, schema.options as string[]) }).optional();
}

/**
 * An integer query parameter within `bound` (absent → its default). Anything else, a repeated
 * parameter included, is `Invalid value for <field>: must be an integer between <min> and <max>`.
 */
export function queryInteger(field: string, bound: Bound) {
  const message = `Invalid value for ${field}: must be an integer between ${bound.min} and ${bound.max}`;
  return z
    .string({ error: message })
    .check((ctx) => {
      const ok = /^\d+$/.test(ctx.value) && Number(ctx.value) >= bound.min && Number(ctx.value) <= bound.max;
      if (!ok) ctx.issues.push({ code: 'custom', input: ctx.value, message });
    })
    .optional()
    .transform((v) => (v === undefined ? bound.def : Number(v)))
    .meta({ type: 'integer', minimum: bound.min, maximum: bound.max, default: bound.def });
}

/** `true` / `false` as a query parameter (absent → `def`). */
function queryBoolean(field: string, def: boolean) {
  return z
    .enum(['true', 'false'], { error: `Invalid value for ${field}: must be true or false` })
    .optional()
    .transform((v) => (v === undefined ? def : v === 'true'))
    .meta({ type: 'string', enum: ['true', 'false'], default: String(def) });
}

/** An integer argument within [min, max] (GraphQL has typed it already; this is the range). */
function intRange(field: string, min: number, max: number, message = `Invalid value for ${field}: must be an integer between ${min} and ${max}`) {
  return z.number().check((ctx) => {
    if (!Number.isInteger(ctx.value) || ctx.value < min || ctx.value > max) ctx.issues.push({ code: 'custom', input: ctx.value, message });
  });
}

// ------------------------------------------------------------------------------------------
// Projects

export const CreateProjectInput = body({
  id: z
    .string({ error: `Invalid value for id: must match ${PROJECT_ID_PATTERN}` })
    .regex(PROJECT_ID_RE, { error: `Invalid value for id: must match ${PROJECT_ID_PATTERN}` })
    .nullish()
    .meta({ example: '833c-d926-f753-7b4a', description: 'Absent or null: the server generates one.' }),
  name: text('name', 1, 255).meta({ minLength: 1, maxLength: 255, example: 'My project' }),
  icon: optionalChoice('icon', ProjectIcon),
  color: optionalChoice('color', ProjectColor),
  teamId: z.string({ error: 'Invalid value for teamId: expected a string or null' }).nullish().meta({
    description:
      "The team that owns the new project (admin or member). Absent: the credential's team (a key or device token bound to one), else yours; null: yours.",
  }),
}).meta({ id: 'CreateProject', description: 'Without `id` the server generates one; a null `icon` or `color` is the default.' });

export const DeviceCodeInput = body({
  teamId: z
    .string({ error: 'Invalid value for teamId: expected a string or null' })
    .nullish()
    .meta({ description: 'The client logged in with this code creates its new projects in this team (you are admin or member). Absent or null: yours.' }),
}).meta({ id: 'DeviceCodeRequest' });

export const MoveProjectInput = body({
  teamId: z
    .string({ error: 'Missing required field: teamId' })
    .nullable()
    .meta({ description: 'The team to move the project into (you are its admin or member), or null: take a team project as your own (team admins).' }),
}).meta({ id: 'MoveProject' });

export const UpdateProjectInput = body({
  name: text('name', 1, 255, { null: 'type' }).optional(),
  icon: optionalChoice('icon', ProjectIcon),
  color: optionalChoice('color', ProjectColor),
  ...retentionFields,
})
  .check((ctx) => {
    const v = ctx.value;
    if (v.name === undefined && v.icon == null && v.color == null && v.retentionDays === undefined && v.legalHold == null) {
      ctx.issues.push({ code: 'custom', input: v, message: 'Nothing to update: send name, icon, color, retentionDays or legalHold' });
    }
  })
  .meta({
    id: 'UpdateProject',
    description:
      'Any of `name`, `icon`, `color` (null `icon` or `color`: unchanged), `retentionDays` (null: not set), `legalHold`; nothing to change is a 400.',
  });

// ------------------------------------------------------------------------------------------
// Sessions

/** At most this many items in each list of a session's metadata (tags, models, branches). */
const MAX_LIST_ITEMS = 200;

export const PatchSessionInput = body({
  name: text('name', 1, 255, { null: 'type' }).optional(),
  tags: textList('metadata.tags', MAX_LIST_ITEMS, 1, 255).optional().meta({ description: 'Replaces the tags; null or [] clears them.' }),
  userTitle: text('userTitle', 0, 1000, { null: 'type' }).nullable().optional().meta({ description: 'null clears it.' }),
})
  .check((ctx) => {
    const v = ctx.value;
    if (v.name === undefined && v.tags === undefined && v.userTitle === undefined) {
      ctx.issues.push({ code: 'custom', input: v, message: 'Nothing to update: send name, tags or userTitle' });
    }
  })
  .meta({ id: 'PatchSession', description: 'At least one of `name`, `tags`, `userTitle`; an empty patch is a 400.' });

/** GET /projects/{id}/sessions: `limit` and the keyset `cursor`. */
/** The orders of session lists (GraphQL's SessionOrder). */
const SESSION_ORDERS = [
  'CREATED_AT_DESC',
  'CREATED_AT_ASC',
  'UPDATED_AT_DESC',
  'UPDATED_AT_ASC',
  'STARTED_AT_DESC',
  'STARTED_AT_ASC',
  'NAME_ASC',
  'COST_DESC',
  'COST_ASC',
] as const;

/** A cost bound in USD as a query parameter: a non-negative decimal number. */
function queryCost(field: string) {
  const message = `Invalid value for ${field}: must be a number of at least 0 (USD)`;
  return z
    .string({ error: message })
    .check((ctx) => {
      if (!/^\d{1,12}(\.\d{1,12})?$/.test(ctx.value)) ctx.issues.push({ code: 'custom', input: ctx.value, message });
    })
    .optional()
    .transform((v) => (v === undefined ? undefined : Number(v)))
    .meta({ type: 'number', minimum: 0 });
}

export const ProjectSessionsQuery = z
  .object({
    limit: queryInteger('limit', PAGES.projectSessions).meta({ description: 'Sessions per page.' }),
    cursor: z.string({ error: 'Invalid cursor' }).min(1, { error: 'Invalid cursor' }).optional().meta({ description: '`nextCursor` of the previous page.' }),
    orderBy: z
      .enum(SESSION_ORDERS, { error: `Invalid value for orderBy: must be one of ${SESSION_ORDERS.join(', ')}` })
      .default('UPDATED_AT_DESC')
      .meta({
        description:
          'The order (a cursor belongs to its order). `COST_DESC`: most expensive first, sessions without a known cost last; `COST_ASC`: cheapest first, those without a cost first.',
      }),
    minCostUsd: queryCost('minCostUsd').meta({ description: 'Only sessions that cost at least this many USD (a session without a known cost never matches).' }),
    maxCostUsd: queryCost('maxCostUsd').meta({ description: 'Only sessions that cost at most this many USD (a session without a known cost never matches).' }),
  })
  .check((ctx) => {
    const { minCostUsd: min, maxCostUsd: max } = ctx.value;
    if (min !== undefined && max !== undefined && min > max)
      ctx.issues.push({ code: 'custom', input: ctx.value, message: 'Invalid cost range: minCostUsd must not be above maxCostUsd' });
  });

/** GET /sessions/recent. */
export const RecentSessionsQuery = z.object({
  limit: queryInteger('limit', PAGES.recentSessions).meta({ description: 'How many; anything else (empty included) → 400.' }),
});

/** GET …/sessions/{id}/exchanges: the paged read by exchange. */
export const ExchangesQuery = z.object({
  offset: queryInteger('offset', PAGES.exchangeOffset).meta({ description: 'Exchanges to skip: 0 starts at exchange 1. Past the end → an empty page.' }),
  limit: queryInteger('limit', PAGES.exchanges).meta({ description: 'Exchanges per page (a page with content may hold fewer: see above).' }),
  content: queryBoolean('content', true).meta({ description: '`false`: titles, offsets and sizes only (a table of contents).' }),
});

/** GET …/sessions/{id}/related. */
export const RelatedQuery = z.object({
  limit: queryInteger('limit', PAGES.related).meta({ description: 'How many related sessions, at most.' }),
});

/** `limit` of GraphQL's `Session.related` and MCP's related_sessions: the same bounds as REST. */
export const RelatedArgs = z.object({ limit: intRange('limit', PAGES.related.min, PAGES.related.max) });

/** GraphQL `Session.exchanges(offset, limit)`: the same bounds as REST (GraphQL's own 1–200 on `limit` comes first). */
export const ExchangeArgs = z.object({
  offset: intRange('offset', PAGES.exchangeOffset.min, PAGES.exchangeOffset.max),
  limit: intRange('limit', PAGES.exchanges.min, PAGES.exchanges.max),
});

// ------------------------------------------------------------------------------------------
// Session filters

const filterList = (field: string) =>
  z
    .array(z.string())
    .max(MAX_FILTER_VALUES, { error: `Invalid value for ${field}: at most ${MAX_FILTER_VALUES} values` })
    .nullish();

/** A date filter: anything `Date` can read (GraphQL's `String`), else 400. */
function filterDate(field: string) {
  const message = `Invalid value for ${field}: expected an ISO 8601 timestamp`;
  return z
    .union([z.string(), z.date()], { error: message })
    .transform((v) => (v instanceof Date ? v : new Date(v)))
    .check((ctx) => {
      if (Number.isNaN(ctx.value.getTime())) ctx.issues.push({ code: 'custom', input: ctx.value, message });
    })
    .nullish();
}

const TIME_FILTER_NAMES = Object.keys(TIME_FILTERS);

/**
 * `SessionFilters` (GraphQL) with its bounds (bounded work per request) and messages, checked in this order; the
 * canonical form is then src/domain/filters.ts's (`filtersOf` does both).
 */
const SessionFiltersArg = z
  .object({
    projectId: z.string().nullish(),
    projectIds: filterList('projectIds'),
    llmModels: filterList('llmModels'),
    tags: filterList('tags'),
    gitBranches: filterList('gitBranches'),
    deviceIds: filterList('deviceIds'),
    teamIds: filterList('teamIds'),
    uploaderIds: filterList('uploaderIds'),
    clientNames: filterList('clientNames'),
    agentNames: filterList('agentNames'),
    clientName: z.string().nullish(),
    agentName: z.string().nullish(),
    dateRange: z
      .object({ start: filterDate('dateRange.start'), end: filterDate('dateRange.end') })
      .check((ctx) => {
        const { start, end } = ctx.value;
        if (start && end && start.getTime() > end.getTime())
          ctx.issues.push({ code: 'custom', input: ctx.value, message: 'Invalid dateRange: start must not be after end' });
      })
      .nullish(),
    createdAfter: intRange('createdAfter', 1, Number.MAX_SAFE_INTEGER, 'Invalid value for createdAfter: must be an integer of at least 1 (days)').nullish(),
    hasGitBranches: z.boolean().nullish(),
    timeFilter: z
      .string()
      .check((ctx) => {
        if (!Object.hasOwn(TIME_FILTERS, ctx.value))
          ctx.issues.push({ code: 'custom', input: ctx.value, message: `Invalid value for timeFilter. Must be one of: ${TIME_FILTER_NAMES.join(', ')}` });
      })
      .nullish(),
    minCostUsd: costUsd('minCostUsd'),
    maxCostUsd: costUsd('maxCostUsd'),
  })
  .check((ctx) => {
    const { minCostUsd: min, maxCostUsd: max } = ctx.value ?? {};
    if (min != null && max != null && min > max)
      ctx.issues.push({ code: 'custom', input: ctx.value, message: 'Invalid cost range: minCostUsd must not be above maxCostUsd' });
  })
  .nullish();

/** A cost bound in USD: a finite number of at least 0. */
function costUsd(field: string) {
  const message = `Invalid value for ${field}: must be a number of at least 0 (USD)`;
  return z.number({ error: message }).finite({ error: message }).min(0, { error: message }).nullish();
}

/** Filters as clients send them → checked (400 with the documented message) → canonical. */
export function filtersOf(input: SessionFiltersInput | null | undefined, now = new Date()): SessionFilters {
  return normalizeFilters(parseInput(SessionFiltersArg, input), now);
}

// ------------------------------------------------------------------------------------------
// Search

/** A query's work (engine, highlighter) is bounded by these: bounded work per request. */
const MAX_QUERY_CHARS = 512;
const MAX_QUERY_WORDS = 32;

/** searchSessions(query, limit, offset): the query trimmed; too long, or too many distinct words (repeats count once) → 400. */
export const SearchArgs = z.object({
  query: z
    .string({ error: 'Invalid value for query: must not be empty' })
    .transform((q) => q.trim())
    .check((ctx) => {
      const problem = (message: string): void => void ctx.issues.push({ code: 'custom', input: ctx.value, message });
      const q = ctx.value;
      if (q === '') return problem('Invalid value for query: must not be empty');
      if (q.length > MAX_QUERY_CHARS) return problem(`Invalid value for query: at most ${MAX_QUERY_CHARS} characters`);
      const words = new Set<string>();
      WORD_RE.lastIndex = 0;
      for (let m = WORD_RE.exec(q); m; m = WORD_RE.exec(q)) words.add(m[0].toLowerCase());
      if (words.size > MAX_QUERY_WORDS) problem(`Invalid value for query: at most ${MAX_QUERY_WORDS} different words`);
    }),
  limit: intRange('limit', PAGES.search.min, PAGES.search.max, `Invalid value for limit: must be an integer from ${PAGES.search.min} to ${PAGES.search.max}`),
  offset: intRange(
    'offset',
    PAGES.searchOffset.min,
    PAGES.searchOffset.max,
    `Invalid value for offset: must be an integer of at least ${PAGES.searchOffset.min}`,
  ),
});

/**
 * POST /search/resume: the upload CLI's resume search. The query's own bounds are
 * SearchArgs' (checked by the search itself); a null `projectId` searches every project.
 */
/** `?resumable=` (the upload CLI's resume): absent or `false` → every session, `true` → resumable ones only. */
export const ResumableParam = queryBoolean('resumable', false).meta({
  description: "`true`: only what can be resumed (sessions with `sessionData`, the upload CLI's resume blob).",
});

export const ResumeSearchInput = body({
  query: z
    .string({ error: (iss) => (iss.input == null ? 'Missing required field: query' : 'Invalid type for query: expected a string') })
    .meta({ minLength: 1, maxLength: MAX_QUERY_CHARS }),
  projectId: z
    .string({ error: 'Invalid type for projectId: expected a string' })
    .nullish()
    .meta({ description: 'Only this project; absent or null: every project.' }),
}).meta({ id: 'ResumeSearch', description: 'Words the session must contain (1–512 characters, at most 32 different words).' });

// ------------------------------------------------------------------------------------------
// Stats

/** GraphQL `analytics(timeRange)`: a closed range of `createdAt`. */
export const TimeRangeInput = z.object({ start: timestamp('timeRange.start'), end: timestamp('timeRange.end') }).check((ctx) => {
  if (ctx.value.start.getTime() > ctx.value.end.getTime()) {
    ctx.issues.push({ code: 'custom', input: ctx.value, message: 'Invalid timeRange: start must not be after end' });
  }
});

/** ProjectStats.sessionsByDay(days). */
export const DaysArg = intRange('days', PAGES.days.min, PAGES.days.max);
/** sessionFacets(limit): values per facet. */
export const FacetLimitArg = intRange('limit', PAGES.facets.min, PAGES.facets.max);

// ------------------------------------------------------------------------------------------
// API keys

/** `POST /keys` and GraphQL `createApiKey`. */
const scopesMessage = 'Invalid value for scopes. Must be ["read"] or ["read", "write"]';
/** `["read"]` or `["read", "write"]` (in any order); absent or null → both. */
const KeyScopesInput = z
  .array(z.enum(KEY_SCOPES, { error: scopesMessage }), { error: scopesMessage })
  .check((ctx) => {
    if (!ctx.value.includes('read') || ctx.value.length === 0 || new Set(ctx.value).size !== ctx.value.length) {
      ctx.issues.push({ code: 'custom', input: ctx.value, message: scopesMessage });
    }
  })
  .nullish()
  .transform((v): KeyScope[] => (v ? (v.includes('write') ? ['read', 'write'] : ['read']) : ['read', 'write']))
  .meta({
    type: ['array', 'null'],
    items: { type: 'string', enum: [...KEY_SCOPES] },
    description: '`["read"]` makes a read-only key (every write → 403 `This key is read-only`), the kind to give coding agents; default `["read", "write"]`.',
  });

export const CreateKeyInput = body({
  name: text('name', 1, 100),
  expiresInDays: optionalInteger('expiresInDays', 1, 3650).meta({ description: 'Without it the key never expires.' }),
  scopes: KeyScopesInput,
  teamId: z
    .string({ error: 'Invalid value for teamId: expected a string or null' })
    .nullish()
    .meta({ description: "Bind the key to a team where you are admin or member: projects created through it are the team's. Absent or null: yours." }),
}).meta({ id: 'CreateKey' });
