import crypto from 'node:crypto';
import { invalid, MESSAGES } from '../errors';
import { bytesOf, type Findings, type RedactMode } from '../redact';
import { redactUpload } from './redaction';
import { checkString, hasLoneSurrogate, isPlainObject, parseIsoDate } from './validation';

/**
 * An upload's body turned into what is stored (contract §2, §14, §15): validated, secrets
 * redacted, digests taken. Pure CPU work with no I/O, so that a large body can be prepared on a
 * worker thread (src/offload) while the event loop keeps serving.
 */

export interface StoredMetaJson {
  llmModels: string[];
  tags: string[];
  gitBranches: string[];
  extra: Record<string, string>;
}

export const DOC_STRING_FIELDS = ['clientName', 'clientVersion', 'agentName', 'deviceId'] as const;
export const DOC_ARRAY_FIELDS = ['gitBranches', 'llmModels', 'tags'] as const;
const MAX_EXTRA_KEYS = 32;
const MAX_EXTRA_BYTES = 1024;
const MAX_ARRAY_ITEMS = 200;

/**
 * sha256 of markdown, raw data and (by its digest) session data. Without session data it is the
 * digest sessions had before session data existed, so their etags did not change.
 */
export function contentDigestOf(markdown: Buffer, raw: Buffer, sessionDataDigest: string | null = null): string {
  const h = crypto.createHash('sha256');
  h.update(`${markdown.length}:`).update(markdown).update(`${raw.length}:`).update(raw);
  if (sessionDataDigest) h.update(`session:${sessionDataDigest}`);
  return h.digest('hex');
}

export const sessionDataDigestOf = (data: Buffer) => crypto.createHash('sha256').update(data).digest('hex');

export interface ValidUpload {
  name: string;
  markdown: Buffer;
  rawData: Buffer;
  /** Absent (undefined) keeps the stored session data. */
  sessionData?: Buffer;
  projectName?: string;
  startedAt?: Date;
  endedAt?: Date;
  metaColumns: Record<(typeof DOC_STRING_FIELDS)[number], string | null>;
  meta: StoredMetaJson;
}

function textBuffer(v: unknown, field: string, required: boolean): Buffer {
  if (v === undefined || v === null) {
    if (required) throw invalid(`Missing required field: ${field}`);
    return Buffer.alloc(0);
  }
  if (typeof v !== 'string') throw invalid(`Invalid type for ${field}: expected a string`);
  if (required && v.length === 0) throw invalid(`Invalid value for ${field}: must not be empty`);
  if (hasLoneSurrogate(v)) throw invalid(`Invalid value for ${field}: not valid Unicode text`);
  return bytesOf(v);
}

export function validateStringArray(v: unknown, field: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalid(`Invalid type for metadata.${field}: expected an array of strings`);
  if (v.length > MAX_ARRAY_ITEMS) throw invalid(`Invalid value for metadata.${field}: at most ${MAX_ARRAY_ITEMS} items`);
  return v.map((x, i) => checkString(x, `metadata.${field}[${i}]`, 1, 255));
}

function validateMetadata(v: unknown): Pick<ValidUpload, 'metaColumns' | 'meta'> {
  const metaColumns = { clientName: null, clientVersion: null, agentName: null, deviceId: null } as ValidUpload['metaColumns'];
  const meta: StoredMetaJson = { llmModels: [], tags: [], gitBranches: [], extra: {} };
  if (v === undefined || v === null) return { metaColumns, meta };
  if (!isPlainObject(v)) throw invalid('Invalid type for metadata: expected an object');
  for (const f of DOC_STRING_FIELDS) {
    if (v[f] !== undefined && v[f] !== null) metaColumns[f] = checkString(v[f], `metadata.${f}`, 0, 255);
  }
  for (const f of DOC_ARRAY_FIELDS) meta[f] = validateStringArray(v[f], f);
  const extraKeys = Object.keys(v).filter((k) => !(DOC_STRING_FIELDS as readonly string[]).includes(k) && !(DOC_ARRAY_FIELDS as readonly string[]).includes(k));
  if (extraKeys.length > MAX_EXTRA_KEYS) throw invalid(`Invalid metadata: at most ${MAX_EXTRA_KEYS} extra keys`);
  for (const k of extraKeys) {
    const val = v[k];
    if (val === null || val === undefined) continue;
    if (typeof val !== 'string') throw invalid(`Invalid type for metadata.${k}: extra metadata values must be strings`);
    if (hasLoneSurrogate(val)) throw invalid(`Invalid value for metadata.${k}: not valid Unicode text`);
    if (Buffer.byteLength(val, 'utf8') > MAX_EXTRA_BYTES || Buffer.byteLength(k, 'utf8') > MAX_EXTRA_BYTES) {
      throw invalid(`Invalid value for metadata.${k}: extra metadata keys and values are limited to 1 KiB`);
    }
    // A data property even for keys like `__proto__` (plain assignment would drop them).
    Object.defineProperty(meta.extra, k, { value: val, enumerable: true, writable: true, configurable: true });
  }
  return { metaColumns, meta };
}

export function validateUpload(body: unknown): ValidUpload {
  if (!isPlainObject(body)) throw invalid('Request body must be a JSON object');
  if (body.name === undefined || body.name === null) throw invalid('Missing required field: name');
  const name = checkString(body.name, 'name', 1, 255);
  const markdown = textBuffer(body.markdown, 'markdown', true);
  const rawData = textBuffer(body.rawData, 'rawData', false);
  // The upload CLI omits an empty sessionData (Go's omitempty): null and "" also keep the stored one.
  const sessionData = body.sessionData == null || body.sessionData === '' ? undefined : textBuffer(body.sessionData, 'sessionData', false);
  const projectName = body.projectName == null ? undefined : checkString(body.projectName, 'projectName', 1, 255);
  const startedAt = body.startedAt == null ? undefined : parseIsoDate(body.startedAt, 'startedAt');
  const endedAt = body.endedAt == null ? undefined : parseIsoDate(body.endedAt, 'endedAt');
  return { name, markdown, rawData, sessionData, projectName, startedAt, endedAt, ...validateMetadata(body.metadata) };
}

export interface PreparedUpload {
  /** Validated and (REDACT_SECRETS=on) redacted. */
  upload: ValidUpload;
  findings: Findings;
  /** Findings of the sent session data; null when none was sent (the stored one is kept). */
  sessionDataFindings: Findings | null;
  /** sha256 of the sent session data, null when none was sent. */
  sentDataDigest: string | null;
  /**
   * contentDigestOf(markdown, raw data, sentDataDigest): the session's content digest unless the
   * upload keeps stored session data (then the stored data's digest is part of it).
   */
  contentDigest: string;
}

export function prepareUpload(body: unknown, mode: RedactMode): PreparedUpload {
  // Secrets go before anything is stored, logged or indexed (contract §14).
  const { upload, findings, sessionDataFindings } = redactUpload(validateUpload(body), mode);
  const sentDataDigest = upload.sessionData ? sessionDataDigestOf(upload.sessionData) : null;
  return { upload, findings, sessionDataFindings, sentDataDigest, contentDigest: contentDigestOf(upload.markdown, upload.rawData, sentDataDigest) };
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** prepareUpload of a JSON body given as bytes (strict UTF-8 and JSON, as src/http/body.ts). */
export function prepareUploadJson(bytes: Uint8Array, mode: RedactMode): PreparedUpload {
  let body: unknown;
  try {
    body = JSON.parse(utf8.decode(bytes));
  } catch {
    throw invalid(MESSAGES.invalidJson);
  }
  return prepareUpload(body, mode);
}
