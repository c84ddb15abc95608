/**
 * Session filters: what clients send, and the one canonical form that the SQL of
 * src/data/session-filters.ts and the search engine (src/search/engine/filter.ts) both apply. Pure.
 */
/** SessionFilters as clients send them (GraphQL input; REST may grow the same). */
export interface SessionFiltersInput {
  projectId?: string | null;
  projectIds?: string[] | null;
  llmModels?: string[] | null;
  tags?: string[] | null;
  gitBranches?: string[] | null;
  clientNames?: string[] | null;
  agentNames?: string[] | null;
  deviceIds?: string[] | null;
  /** Only the projects of these teams (of those the caller is in). */
  teamIds?: string[] | null;
  /** Only sessions these users uploaded. */
  uploaderIds?: string[] | null;
  clientName?: string | null;
  agentName?: string | null;
  dateRange?: { start?: string | Date | null; end?: string | Date | null } | null;
  createdAfter?: number | null;
  hasGitBranches?: boolean | null;
  timeFilter?: string | null;
  /** USD: sessions whose known cost is at least / at most this. */
  minCostUsd?: number | null;
  maxCostUsd?: number | null;
}

/**
 * Filters after validation, in one canonical form that both the SQL query builder and the
 * search engine apply. Every present field narrows (AND); a list matches any of its values.
 * Client and agent names are lower-cased (compared case-insensitively); the rest exactly.
 */
export interface SessionFilters {
  projectIds?: string[];
  llmModels?: string[];
  tags?: string[];
  gitBranches?: string[];
  clientNames?: string[];
  agentNames?: string[];
  deviceIds?: string[];
  /** Owner scopes (teams) to read; applied by the caller's scopes (src/services/access.ts), not as a column filter. */
  teamIds?: string[];
  uploaderIds?: string[];
  createdFrom?: Date;
  createdTo?: Date;
  hasGitBranches?: boolean;
  /** The session's cost in USD within [costFrom, costTo]; a session without a known cost never matches. Lists only (the search index has no costs). */
  costFrom?: number;
  costTo?: number;
}

export const TIME_FILTERS: Record<string, number> = {
  last24hours: 1,
  last7days: 7,
  last30days: 30,
  last90days: 90,
};

const DAY_MS = 24 * 60 * 60 * 1000;

/** Values one list filter may hold. */
export const MAX_FILTER_VALUES = 100;

/** A list filter's values, each once; an empty list is no filter. */
function list(values: string[] | null | undefined): string[] | undefined {
  if (!values || values.length === 0) return undefined;
  return [...new Set(values)];
}

const dateOf = (value: string | Date) => (value instanceof Date ? value : new Date(value));

function intersect<T>(a: T[] | undefined, b: T[] | undefined): T[] | undefined {
  if (!a) return b;
  if (!b) return a;
  return a.filter((x) => b.includes(x));
}

/**
 * The canonical form of filters already checked by SessionFiltersArg (src/services/inputs.ts,
 * which holds the bounds and messages): lists deduplicated, `projectId` and `projectIds` (and the
 * single and listed client and agent names) intersected, the date filters folded into one range.
 */
export function normalizeFilters(input: SessionFiltersInput | null | undefined, now = new Date()): SessionFilters {
  const f: SessionFilters = {};
  if (!input) return f;
  const projectIds = intersect(input.projectId ? [input.projectId] : undefined, list(input.projectIds));
  if (projectIds) f.projectIds = projectIds;
  for (const key of ['llmModels', 'tags', 'gitBranches', 'deviceIds', 'teamIds', 'uploaderIds'] as const) {
    const v = list(input[key]);
    if (v) f[key] = v;
  }
  const lower = (xs: string[] | undefined) => (xs ? [...new Set(xs.map((x) => x.toLowerCase()))] : undefined);
  const clientNames = intersect(lower(list(input.clientNames)), lower(input.clientName != null ? [input.clientName] : undefined));
  if (clientNames) f.clientNames = clientNames;
  const agentNames = intersect(lower(list(input.agentNames)), lower(input.agentName != null ? [input.agentName] : undefined));
  if (agentNames) f.agentNames = agentNames;

  const froms: Date[] = [];
  const tos: Date[] = [];
  if (input.dateRange) {
    const { start, end } = input.dateRange;
    const s = start != null ? dateOf(start) : undefined;
    const e = end != null ? dateOf(end) : undefined;
    if (s) froms.push(s);
    if (e) tos.push(e);
  }
  if (input.createdAfter != null) {
    froms.push(new Date(now.getTime() - input.createdAfter * DAY_MS));
  }
  if (input.timeFilter != null) {
    const days = TIME_FILTERS[input.timeFilter];
    froms.push(new Date(now.getTime() - days * DAY_MS));
  }
  if (froms.length) f.createdFrom = new Date(Math.max(...froms.map((d) => d.getTime())));
  if (tos.length) f.createdTo = new Date(Math.min(...tos.map((d) => d.getTime())));
  if (input.hasGitBranches != null) f.hasGitBranches = input.hasGitBranches;
  if (input.minCostUsd != null) f.costFrom = input.minCostUsd;
  if (input.maxCostUsd != null) f.costTo = input.maxCostUsd;
  return f;
}

// The SQL of these filters is the data layer's (src/data/session-filters.ts).
