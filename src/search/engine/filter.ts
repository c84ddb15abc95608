import type { SessionFilters } from '../../domain/filters';
import { keyOf, sessionDigestOf } from '../../domain/search-documents';

/**
 * A Meilisearch string literal: double-quoted, with backslashes and quotes escaped, so that no
 * value can close the literal and inject filter syntax.
 */
export function meiliString(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * Index work names the owner and exact keys: these are the only filters the worker
 * sends for deletes and retirements. Digests are lower-case hex, so the engine's case-insensitive
 * comparison of strings is exact on them.
 */
export const ownedProjectFilter = (userId: string, projectId: string) => `userId = ${meiliString(userId)} AND projectDigest = ${meiliString(keyOf(projectId))}`;

/** The documents of these sessions, each named with its owner (one group per owner). */
export function ownedSessionsFilter(sessions: Array<{ userId: string; projectId: string; sessionId: string }>): string {
  const byOwner = new Map<string, string[]>();
  for (const s of sessions) {
    const list = byOwner.get(s.userId) ?? [];
    list.push(meiliString(sessionDigestOf(s.projectId, s.sessionId)));
    byOwner.set(s.userId, list);
  }
  const groups = [...byOwner].map(([userId, digests]) => `(userId = ${meiliString(userId)} AND sessionDigest IN [${digests.join(', ')}])`);
  return groups.length === 1 ? groups[0] : `(${groups.join(' OR ')})`;
}

const inList = (field: string, values: string[]) => `${field} IN [${values.map(meiliString).join(', ')}]`;
/** Values compared exactly: by their keys (keyOf), which the engine's case-free comparison cannot confuse. */
const inKeys = (field: string, values: string[]) => inList(field, values.map(keyOf));

/** True when some list filter is empty: it can match nothing (e.g. projectId ∉ projectIds). */
export function matchesNothing(f: SessionFilters): boolean {
  return (['projectIds', 'llmModels', 'tags', 'gitBranches', 'clientNames', 'agentNames', 'deviceIds', 'teamIds', 'uploaderIds'] as const).some(
    (k) => f[k] !== undefined && f[k].length === 0,
  );
}

/** The owner scopes a search reads (the user's id and their teams'); always at least one. */
export const scopeFilter = (scopes: readonly string[]) =>
  scopes.length === 1 ? `userId = ${meiliString(scopes[0])}` : `userId IN [${scopes.map(meiliString).join(', ')}]`;

/**
 * The filter expression for a user's search: always scoped to the owner, then every
 * SessionFilters field (AND across fields; a list matches any of its values), as the SQL lists do.
 * Client and agent names are indexed lower-cased and arrive lower-cased from normalizeFilters.
 */
export function searchFilter(scopes: string | readonly string[], f: SessionFilters): string {
  const parts = [scopeFilter(typeof scopes === 'string' ? [scopes] : scopes)];
  // Project ids are case-sensitive: compared by their exact key.
  if (f.projectIds) parts.push(`projectDigest IN [${f.projectIds.map((p) => meiliString(keyOf(p))).join(', ')}]`);
  // Tags, models, branches and devices compare exactly, as in the database.
  if (f.llmModels) parts.push(inKeys('modelDigests', f.llmModels));
  if (f.tags) parts.push(inKeys('tagDigests', f.tags));
  if (f.gitBranches) parts.push(inKeys('branchDigests', f.gitBranches));
  if (f.clientNames)
    parts.push(
      inList(
        'clientName',
        f.clientNames.map((s) => s.toLowerCase()),
      ),
    );
  if (f.agentNames)
    parts.push(
      inList(
        'agentName',
        f.agentNames.map((s) => s.toLowerCase()),
      ),
    );
  if (f.deviceIds) parts.push(inKeys('deviceDigest', f.deviceIds));
  // User ids compare exactly in the database: by their exact key here too.
  if (f.uploaderIds) parts.push(`uploaderDigest IN [${f.uploaderIds.map((u) => meiliString(keyOf(u))).join(', ')}]`);
  if (f.createdFrom) parts.push(`createdAt >= ${f.createdFrom.getTime()}`);
  if (f.createdTo) parts.push(`createdAt <= ${f.createdTo.getTime()}`);
  if (f.hasGitBranches != null) parts.push(`hasGitBranches = ${f.hasGitBranches ? 'true' : 'false'}`);
  return parts.join(' AND ');
}
