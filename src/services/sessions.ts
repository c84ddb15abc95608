/**
 * What a session is to both front doors: its metadata, the client view (SessionDto), its entity
 * tag. Uploads are in session-upload.ts, reads and lists in session-lists.ts, patches and deletes
 * in session-changes.ts; the statements in src/data/sessions.ts.
 */
import { LABEL_KINDS, type LabelKind } from '../data/session-filters';
import type { SessionRow } from '../data/sessions';
import { redactionsOf } from '../domain/redaction';
import { DOC_ARRAY_FIELDS, type StoredMetaJson } from '../domain/upload';
import { ownerOf } from '../domain/teams';

export type { SessionKey, SessionOrder, SessionRow } from '../data/sessions';
export { contentDigestOf, DOC_STRING_FIELDS, sessionDataDigestOf, type StoredMetaJson } from '../domain/upload';

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

export interface SessionDto {
  id: string;
  /** = id (client-compatible: the upload CLI's native session id). */
  clientId: string;
  projectId: string;
  name: string;
  userTitle: string | null;
  markdownSize: number;
  rawDataSize: number;
  sessionDataSize: number;
  createdAt: string;
  updatedAt: string;
  startedAt: string;
  endedAt: string;
  metadata: SessionMetadata;
  /** Secrets found per rule; never a value. */
  redactions: Array<{ rule: string; count: number }>;
  /** The user whose credential first created the session; null for sessions stored before teams. */
  uploadedBy: { id: string; name: string } | null;
  etag?: string;
}

/** `uploadedBy` of a session row (its uploader's name as the read selected it). */
export const uploaderOf = (row: Pick<SessionRow, 'uploadedBy' | 'uploaderName'>) =>
  row.uploadedBy ? { id: row.uploadedBy, name: row.uploaderName ?? '' } : null;

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

export function toSession(row: SessionRow, withEtag = true): SessionDto {
  const dto: SessionDto = {
    id: row.id,
    clientId: row.id,
    projectId: row.projectId,
    name: row.name,
    userTitle: row.userTitle,
    markdownSize: Number(row.markdownSize),
    rawDataSize: Number(row.rawDataSize),
    sessionDataSize: Number(row.sessionDataSize ?? 0),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    startedAt: row.startedAt.toISOString(),
    endedAt: row.endedAt.toISOString(),
    metadata: metadataOf(row),
    redactions: redactionsOf(row.redactionsJson),
    uploadedBy: uploaderOf(row),
  };
  if (withEtag) dto.etag = row.etag;
  return dto;
}

export { etagMatches, sessionEtag } from '../domain/etag';

/** The labels (session_labels rows) of a session's list metadata: models, tags, branches, each value once. */
export function labelsOf(meta: StoredMetaJson): Array<readonly [LabelKind, string]> {
  const out: Array<readonly [LabelKind, string]> = [];
  for (const key of DOC_ARRAY_FIELDS) for (const v of new Set(meta[key])) out.push([LABEL_KINDS[key], v] as const);
  return out;
}

export interface ProjectRef {
  id: string;
  name: string;
  icon: string;
  color: string;
  ownerId?: string;
  ownerType?: string;
  ownerName?: string | null;
}

/** The `project` inside a session object: its appearance and owner. */
export const presentProjectRef = (p: ProjectRef) => ({
  id: p.id,
  name: p.name,
  icon: p.icon,
  color: p.color,
  ...(p.ownerId ? { owner: ownerOf({ ownerId: p.ownerId, ownerType: p.ownerType ?? 'user', ownerName: p.ownerName }) } : {}),
});

/** A session the caller can read, with the project it belongs to (read in the same statement). */
export type OwnedSession = SessionRow & { project: ProjectRef };
