/**
 * How a session is shown to clients: one function per field of the JSON object, in the object's
 * order. REST builds its `Session` objects with `presentSession`; GraphQL's `Session` and
 * `SearchResult` resolvers are these same functions, so a field is mapped from the row once.
 */
import { redactionsOf } from '../../domain/redaction';
import { metadataOf, type SessionRow } from '../sessions';

const iso = (d: Date) => d.toISOString();

/** `uploadedBy` of a session row (its uploader's name as the read selected it). */
export const uploaderOf = (row: Pick<SessionRow, 'uploadedBy' | 'uploaderName'>): { id: string; name: string } | null =>
  row.uploadedBy ? { id: row.uploadedBy, name: row.uploaderName ?? '' } : null;

/** Each field of a client's session object, from the row. */
export const sessionFields = {
  id: (r: SessionRow) => r.id,
  /** = id (client-compatible: the upload CLI's native session id). */
  clientId: (r: SessionRow) => r.id,
  projectId: (r: SessionRow) => r.projectId,
  name: (r: SessionRow) => r.name,
  userTitle: (r: SessionRow) => r.userTitle,
  markdownSize: (r: SessionRow) => r.markdownSize,
  rawDataSize: (r: SessionRow) => r.rawDataSize,
  sessionDataSize: (r: SessionRow) => r.sessionDataSize,
  createdAt: (r: SessionRow) => iso(r.createdAt),
  updatedAt: (r: SessionRow) => iso(r.updatedAt),
  startedAt: (r: SessionRow) => iso(r.startedAt),
  endedAt: (r: SessionRow) => iso(r.endedAt),
  metadata: (r: SessionRow) => metadataOf(r),
  /** Secrets found per rule; never a value. */
  redactions: (r: SessionRow) => redactionsOf(r.redactionsJson),
  /** The user whose credential first created the session; null for sessions stored before teams. */
  uploadedBy: uploaderOf,
};

type Fields = typeof sessionFields;

/** A session as clients read it (REST's `Session`); `etag` is left out where a list has no use for it. */
export type SessionDto = { [K in keyof Fields]: ReturnType<Fields[K]> } & { etag?: string };

export function presentSession(row: SessionRow, withEtag = true): SessionDto {
  const f = sessionFields;
  const dto: SessionDto = {
    id: f.id(row),
    clientId: f.clientId(row),
    projectId: f.projectId(row),
    name: f.name(row),
    userTitle: f.userTitle(row),
    markdownSize: f.markdownSize(row),
    rawDataSize: f.rawDataSize(row),
    sessionDataSize: f.sessionDataSize(row),
    createdAt: f.createdAt(row),
    updatedAt: f.updatedAt(row),
    startedAt: f.startedAt(row),
    endedAt: f.endedAt(row),
    metadata: f.metadata(row),
    redactions: f.redactions(row),
    uploadedBy: f.uploadedBy(row),
  };
  if (withEtag) dto.etag = row.etag;
  return dto;
}
