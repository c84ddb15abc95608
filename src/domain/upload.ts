import crypto from 'node:crypto';
import { z } from 'zod';
import { bytesOf, type Findings, type RedactMode } from '../redact';
import { storedIndexOf } from './exchanges';
import { parseJsonBytes } from './json';
import { redactUpload } from './redaction';
import { body, content, parseInput, text, textList, timestamp } from './inputs';
import { hasLoneSurrogate } from './text';
import { isPlainObject } from './validation';
import { UsageReader, type PriceTable, type SessionUsage } from './usage';

/**
 * An upload's body turned into what is stored: validated, secrets
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

interface ValidUpload {
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

/** `metadata`'s documented fields (docs/rest.md): in this order, before any extra key. */
const KnownMetadata = z
  .object(
    {
      ...(Object.fromEntries(DOC_STRING_FIELDS.map((f) => [f, text(`metadata.${f}`, 0, 255).nullish()])) as Record<
        (typeof DOC_STRING_FIELDS)[number],
        z.ZodOptional<z.ZodNullable<ReturnType<typeof text>>>
      >),
      ...(Object.fromEntries(DOC_ARRAY_FIELDS.map((f) => [f, textList(`metadata.${f}`, MAX_ARRAY_ITEMS, 1, 255)])) as Record<
        (typeof DOC_ARRAY_FIELDS)[number],
        ReturnType<typeof textList>
      >),
    },
    { error: 'Invalid type for metadata: expected an object' },
  )
  .meta({ additionalProperties: { type: ['string', 'null'], maxLength: MAX_EXTRA_BYTES } });

const isDocField = (k: string) => (DOC_STRING_FIELDS as readonly string[]).includes(k) || (DOC_ARRAY_FIELDS as readonly string[]).includes(k);

/**
 * `metadata`'s other keys: at most 32, string values (null: dropped) of at most 1 KiB, keys too.
 * Read from the input itself, as data properties, so that a key like `__proto__` is kept (zod's
 * object output, like plain assignment, would drop it).
 */
const ExtraMetadata = z
  .custom<Record<string, unknown>>((v) => isPlainObject(v), { error: 'Invalid type for metadata: expected an object' })
  .check((ctx) => {
    const keys = Object.keys(ctx.value).filter((k) => !isDocField(k));
    const fail = (message: string): void => void ctx.issues.push({ code: 'custom', input: ctx.value, message });
    if (keys.length > MAX_EXTRA_KEYS) return fail(`Invalid metadata: at most ${MAX_EXTRA_KEYS} extra keys`);
    for (const k of keys) {
      const val = ctx.value[k];
      if (val === null || val === undefined) continue;
      if (typeof val !== 'string') return fail(`Invalid type for metadata.${k}: extra metadata values must be strings`);
      if (hasLoneSurrogate(val)) return fail(`Invalid value for metadata.${k}: not valid Unicode text`);
      if (Buffer.byteLength(val, 'utf8') > MAX_EXTRA_BYTES || Buffer.byteLength(k, 'utf8') > MAX_EXTRA_BYTES) {
        return fail(`Invalid value for metadata.${k}: extra metadata keys and values are limited to ${MAX_EXTRA_BYTES / 1024} KiB`);
      }
    }
  })
  .transform((v) => {
    const extra: Record<string, string> = {};
    for (const k of Object.keys(v)) {
      if (isDocField(k) || typeof v[k] !== 'string') continue;
      Object.defineProperty(extra, k, { value: v[k], enumerable: true, writable: true, configurable: true });
    }
    return { extra };
  })
  .meta({ type: 'object', maxProperties: MAX_EXTRA_KEYS + DOC_STRING_FIELDS.length + DOC_ARRAY_FIELDS.length });

const Metadata = z
  .intersection(KnownMetadata, ExtraMetadata)
  .nullish()
  .transform((v): Pick<ValidUpload, 'metaColumns' | 'meta'> => ({
    metaColumns: { clientName: v?.clientName ?? null, clientVersion: v?.clientVersion ?? null, agentName: v?.agentName ?? null, deviceId: v?.deviceId ?? null },
    meta: { llmModels: v?.llmModels ?? [], tags: v?.tags ?? [], gitBranches: v?.gitBranches ?? [], extra: v?.extra ?? {} },
  }))
  .meta({ description: `Up to ${MAX_EXTRA_KEYS} extra string keys of at most 1 KiB each are kept.` });

const DATE_TIME = { format: 'date-time', example: '2024-01-15T10:30:00.000Z' };

/**
 * The upload body, as sent by the upload CLI, the SDKs and the console. Unknown
 * top-level fields (clients send `projectId`) are ignored; the path wins.
 */
export const UploadInput = body({
  name: text('name', 1, 255),
  markdown: content('markdown', true).meta({ minLength: 1 }).transform(bytesOf),
  rawData: content('rawData', false)
    .nullish()
    .transform((v) => (v ? bytesOf(v) : Buffer.alloc(0)))
    .meta({ description: 'Kept byte-exact.' }),
  // The upload CLI omits an empty sessionData (Go's omitempty): null and "" also keep the stored one.
  sessionData: content('sessionData', false)
    .nullish()
    .transform((v) => (v ? bytesOf(v) : undefined))
    .meta({ description: 'The upload CLI’s resume blob, kept byte-exact; absent, null or "" keeps the stored one.' }),
  projectName: text('projectName', 1, 255)
    .nullish()
    .transform((v) => v ?? undefined)
    .meta({ description: 'Name of the project when this upload creates it.' }),
  startedAt: timestamp('startedAt')
    .meta(DATE_TIME)
    .nullish()
    .transform((v) => v ?? undefined),
  endedAt: timestamp('endedAt')
    .meta(DATE_TIME)
    .nullish()
    .transform((v) => v ?? undefined),
  metadata: Metadata,
}).transform(({ metadata, ...rest }): ValidUpload => ({ ...rest, ...metadata }));

export const validateUpload = (input: unknown): ValidUpload => parseInput(UploadInput, input);

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
  /** The markdown's exchange index to store with it (large markdown only, else null): ./exchanges.ts. */
  exchangeIndex: Buffer | null;
  /**
   * Token usage read from the raw data as stored (./usage): null when the log records none;
   * undefined when no price table was given (not read).
   */
  usage?: SessionUsage | null;
}

export function prepareUpload(body: unknown, mode: RedactMode, prices?: PriceTable): PreparedUpload {
  // Secrets go before anything is stored, logged or indexed.
  return prepareValidUpload(validateUpload(body), mode, prices);
}

/** Read in pieces: the reader decodes each piece to text, and one piece at a time is enough. */
const USAGE_PIECE = 1024 * 1024;

/** Token usage in a raw log (see ./usage), read piece by piece. */
export function usageOfRaw(raw: Uint8Array, prices: PriceTable): SessionUsage | null {
  const reader = new UsageReader(prices);
  for (let at = 0; at < raw.length; at += USAGE_PIECE) reader.push(raw.subarray(at, at + USAGE_PIECE));
  return reader.result();
}

/** A validated upload, redacted, with its digests, stored exchange index and (given prices) usage: uploads and imports. */
export function prepareValidUpload(valid: Parameters<typeof redactUpload>[0], mode: RedactMode, prices?: PriceTable): PreparedUpload {
  const { upload, findings, sessionDataFindings } = redactUpload(valid, mode);
  const sentDataDigest = upload.sessionData ? sessionDataDigestOf(upload.sessionData) : null;
  return {
    upload,
    findings,
    sessionDataFindings,
    sentDataDigest,
    contentDigest: contentDigestOf(upload.markdown, upload.rawData, sentDataDigest),
    // Of the markdown as stored (redacted: titles never show a secret; masks keep every offset).
    exchangeIndex: storedIndexOf(upload.markdown),
    // Of the raw data as stored, so that reading it again from storage gives the same.
    ...(prices ? { usage: usageOfRaw(upload.rawData, prices) } : {}),
  };
}

/** prepareUpload of a JSON body given as bytes (strict UTF-8 and JSON, as src/http/body.ts). */
export function prepareUploadJson(bytes: Uint8Array, mode: RedactMode, prices?: PriceTable): PreparedUpload {
  return prepareUpload(parseJsonBytes(bytes), mode, prices);
}
