/**
 * A session as the export archive's session.json holds it (src/api/schemas/archive.ts): the
 * session presenter's fields but those the archive leaves out, and the archive's own forms of
 * metadata, tags, uploader and findings. A field added to REST's `Session` is in the archive too.
 */
import type { SessionJson } from '../../api/schemas/archive';
import { metadataOf, parseStoredMeta } from '../sessions';
import type { SessionRow } from '../../domain/session-row';
import { presentSession } from './session';

/** Findings as stored (rule, count, part, mode): an import restores them exactly. */
function storedRedactions(json: string): SessionJson['redactions'] {
  try {
    const v = JSON.parse(json) as unknown;
    return Array.isArray(v) ? (v as SessionJson['redactions']) : [];
  } catch {
    return [];
  }
}

/** `uploadedBy`: the uploader's email (ids differ between servers), or null. */
export function presentSessionJson(row: SessionRow, uploadedBy: string | null): SessionJson {
  // Left out (ARCHIVE_LEFT_OUT): the path names the ids, the manifest the files' sizes.
  const { id: _id, clientId: _clientId, projectId: _projectId, markdownSize: _m, rawDataSize: _r, sessionDataSize: _s, ...fields } = presentSession(row);
  const { tags: _tags, ...metadata } = metadataOf(row);
  return {
    ...fields,
    metadata,
    tags: parseStoredMeta(row.metadataJson).tags,
    etag: row.etag,
    uploadedBy,
    redactions: storedRedactions(row.redactionsJson),
  };
}
