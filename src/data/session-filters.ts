import type { SessionFilters } from '../domain/filters';
import { LABEL_KINDS } from '../domain/session-row';
import { inScopes, marks } from './sql';

/**
 * SQL WHERE fragment (for table alias `s` = sessions) applying the filters; always scoped to
 * the owner scopes the caller reads through. Returns the fragment and its positional parameters.
 */
export function filtersToSql(scopes: readonly string[], f: SessionFilters, alias = 's'): { where: string; params: unknown[] } {
  const parts: string[] = [inScopes(`${alias}.userId`, scopes)];
  const params: unknown[] = [...scopes];
  const inList = (col: string, values: string[]) => {
    // An empty list here comes from intersecting filters (projectId ∩ projectIds): nothing matches.
    if (values.length === 0) {
      parts.push('1 = 0');
      return;
    }
    parts.push(`${col} IN (${marks(values)})`);
    params.push(...values);
  };
  if (f.projectIds) inList(`${alias}.projectId`, f.projectIds);
  for (const key of ['llmModels', 'tags', 'gitBranches'] as const) {
    const values = f[key];
    if (!values) continue;
    if (values.length === 0) {
      parts.push('1 = 0');
      continue;
    }
    parts.push(
      `EXISTS (SELECT 1 FROM session_labels l WHERE l.userId = ${alias}.userId AND l.projectId = ${alias}.projectId AND l.sessionId = ${alias}.id AND l.kind = ? AND l.value IN (${marks(values)}))`,
    );
    params.push(LABEL_KINDS[key], ...values);
  }
  // Columns with a case-insensitive collation: plain equality is case-insensitive.
  if (f.clientNames) inList(`${alias}.clientName`, f.clientNames);
  if (f.agentNames) inList(`${alias}.agentName`, f.agentNames);
  if (f.deviceIds) inList(`${alias}.deviceId`, f.deviceIds);
  if (f.uploaderIds) inList(`${alias}.uploadedBy`, f.uploaderIds);
  if (f.createdFrom) {
    parts.push(`${alias}.createdAt >= ?`);
    params.push(f.createdFrom);
  }
  if (f.createdTo) {
    parts.push(`${alias}.createdAt <= ?`);
    params.push(f.createdTo);
  }
  if (f.hasGitBranches != null) {
    parts.push(`${alias}.hasGitBranches = ?`);
    params.push(f.hasGitBranches);
  }
  // A session without a known cost (NULL) matches neither bound.
  if (f.costFrom != null) {
    parts.push(`${alias}.costUsd >= ?`);
    params.push(f.costFrom);
  }
  if (f.costTo != null) {
    parts.push(`${alias}.costUsd <= ?`);
    params.push(f.costTo);
  }
  return { where: parts.join(' AND '), params };
}
