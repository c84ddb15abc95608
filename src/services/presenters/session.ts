/**
 * How a session is shown to clients: one function per field of the JSON object, in the object's
 * order. REST builds its `Session` objects with `presentSession`; GraphQL's `Session` and
 * `SearchResult` resolvers are these same functions, so a field is mapped from the row once.
 */
import type { z } from 'zod';
import type { Session } from '../../api/schemas/resources';
import { redactionsOf } from '../../domain/redaction';
import { metadataOf } from '../sessions';
import type { SessionRow } from '../../domain/session-row';

/** REST's `Session` schema is the type: a field added there is a missing function below until it is mapped. */
export type SessionDto = z.input<typeof Session>;
type Field = Exclude<keyof SessionDto, 'etag'>;

const iso = (d: Date) => d.toISOString();

/** `uploadedBy` of a session row (its uploader's name as the read selected it). */
const uploaderOf = (row: Pick<SessionRow, 'uploadedBy' | 'uploaderName'>): { id: string; name: string } | null =>
  row.uploadedBy ? { id: row.uploadedBy, name: row.uploaderName ?? '' } : null;

/** Each field of a client's session object, from the row. */
export const sessionFields: { [K in Field]-?: (r: SessionRow) => SessionDto[K] } = {
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
  // The schema's catch-all (extra keys are strings) cannot be stated beside the array fields in TypeScript.
  metadata: (r: SessionRow) => metadataOf(r) as SessionDto['metadata'],
  /** Secrets found per rule; never a value. */
  redactions: (r: SessionRow) => redactionsOf(r.redactionsJson),
  /** The user whose credential first created the session; null for sessions stored before teams. */
  uploadedBy: uploaderOf,
};

/** A session as clients read it; `etag` is left out where a list has no use for it. */
export function presentSession(row: SessionRow, withEtag = true): SessionDto {
  const dto = Object.fromEntries(Object.entries(sessionFields).map(([k, f]) => [k, f(row)])) as SessionDto;
  if (withEtag) dto.etag = row.etag;
  return dto;
}
