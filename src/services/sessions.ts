/**
 * What a session is to both front doors: its metadata, its entity tag (the client view is
 * presenters/session.ts). Uploads are in session-upload.ts, reads and lists in session-lists.ts, patches and deletes
 * in session-changes.ts; the statements in src/data/sessions.ts.
 */
import { LABEL_KINDS, type LabelKind, type SessionRow } from '../domain/session-row';
import { displayTitle } from '../domain/session';
import { DOC_ARRAY_FIELDS, type StoredMetaJson } from '../domain/upload';
import type { ProjectRef } from './presenters/project';

// ---------------------------------------------------------------------------------------------
// Shapes

export interface SessionMetadata {
  clientName: string | null;
  clientVersion: string | null;
  agentName: string | null;
  deviceId: string | null;
  gitBranches: string[];
  llmModels: string[];
  tags: string[];
  [extra: string]: string | string[] | null;
}

export function parseStoredMeta(json: string): StoredMetaJson {
  const m = JSON.parse(json) as Partial<StoredMetaJson>;
  return { llmModels: m.llmModels ?? [], tags: m.tags ?? [], gitBranches: m.gitBranches ?? [], extra: m.extra ?? {} };
}

export function metadataOf(row: SessionRow): SessionMetadata {
  const m = parseStoredMeta(row.metadataJson);
  return {
    ...m.extra,
    clientName: row.clientName,
    clientVersion: row.clientVersion,
    agentName: row.agentName,
    deviceId: row.deviceId,
    gitBranches: m.gitBranches,
    llmModels: m.llmModels,
    tags: m.tags,
  };
}

/**
 * The display title of a stored session, the one every surface shows (console, share links and
 * their page, MCP, search, related sessions): its user title, else the client's `metadata.title`,
 * else its name.
 */
export const sessionTitle = (row: Pick<SessionRow, 'userTitle' | 'name' | 'metadataJson'>): string =>
  displayTitle({ userTitle: row.userTitle, name: row.name, metadata: { title: parseStoredMeta(row.metadataJson).extra.title } });

/** The labels (session_labels rows) of a session's list metadata: models, tags, branches, each value once. */
export function labelsOf(meta: StoredMetaJson): Array<readonly [LabelKind, string]> {
  const out: Array<readonly [LabelKind, string]> = [];
  for (const key of DOC_ARRAY_FIELDS) for (const v of new Set(meta[key])) out.push([LABEL_KINDS[key], v] as const);
  return out;
}

/** A session the caller can read, with the project it belongs to (read in the same statement). */
export type OwnedSession = SessionRow & { project: ProjectRef };
