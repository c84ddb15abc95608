/**
 * One session of an archive turned into what is stored, as an upload is (src/domain/upload.ts):
 * its metadata validated by the upload's own rules, secrets redacted, digests taken. Pure CPU
 * work, so that a large session can be prepared on a worker thread (src/offload).
 */
import { isUtf8 } from 'node:buffer';
import { invalid } from '../errors';
import type { RedactMode } from '../redact';
import type { PriceTable } from './usage';
import { prepareValidUpload, validateUpload, type PreparedUpload } from './upload';

/** What of a session.json (src/api/schemas/archive.ts) an upload's rules check. */
export interface ImportedFields {
  name: string;
  startedAt: string;
  endedAt: string;
  metadata: Record<string, string | string[] | null>;
  tags: string[];
}

export interface ImportParts {
  json: ImportedFields;
  markdown: Buffer;
  raw: Buffer;
  /** Null: the session has no session data. */
  sessionData: Buffer | null;
}

/** Throws a VALIDATION_ERROR AppError whose message says what is wrong with the session. */
export function prepareImportedSession(parts: ImportParts, mode: RedactMode, prices?: PriceTable): PreparedUpload {
  const { json } = parts;
  if (parts.markdown.length === 0) throw invalid('markdown.md is empty');
  if (!isUtf8(parts.markdown)) throw invalid('markdown.md is not valid UTF-8');
  if (!isUtf8(parts.raw)) throw invalid('raw is not valid UTF-8 (raw data is stored as text)');
  if (parts.sessionData && !isUtf8(parts.sessionData)) throw invalid('session-data.json is not valid UTF-8');
  // The upload's rules for name, times and metadata; the content is the archive's bytes.
  const valid = validateUpload({
    name: json.name,
    markdown: '-',
    startedAt: json.startedAt,
    endedAt: json.endedAt,
    metadata: { ...json.metadata, tags: json.tags },
  });
  valid.markdown = parts.markdown;
  valid.rawData = parts.raw;
  valid.sessionData = parts.sessionData ?? undefined;
  return prepareValidUpload(valid, mode, prices);
}
