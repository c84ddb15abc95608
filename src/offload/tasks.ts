/**
 * The tasks of src/offload, as plain functions: a piscina worker thread loads this file and calls
 * them by name; the inline runner calls them directly. No I/O here, and nothing that opens a
 * handle on import (a thread must be able to load this file alone).
 */
import { isMainThread } from 'node:worker_threads';
import Piscina from 'piscina';
import { AppError, type ErrorCode } from '../errors';
import type { RedactMode } from '../redact';
import { toDocuments, withoutVector, type IndexableSession } from '../domain/search-documents';
import { ExchangeScanner, type ScanState } from '../domain/exchanges';
import { parseJsonBytes } from '../domain/json';
import { prepareUploadJson as prepare, usageOfRaw, type PreparedUpload } from '../domain/upload';
import { prepareImportedSession, type ImportedFields } from '../domain/import-session';
import type { PriceTable, SessionUsage } from '../domain/usage';

export type TaskResult<T> = { value: T } | { error: { code?: ErrorCode; name?: string; message: string; details?: Record<string, unknown> } };

/**
 * An error of a task that is not an AppError: a fault of this service, never the input's, named as
 * the error thrown on the thread was (`TypeError`, `RangeError`…), so that a caller tells it from
 * a client's mistake as it would for the same task run inline.
 */
class ThreadError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

/** A client's mistake (AppError) keeps its code, message and details; anything else is a ThreadError of its name. */
export function reviveError(e: { code?: ErrorCode; name?: string; message: string; details?: Record<string, unknown> }): Error {
  return e.code ? new AppError(e.code, e.message, e.details) : new ThreadError(e.name ?? 'Error', e.message);
}

function capture<T>(f: () => T): TaskResult<T> {
  try {
    return { value: f() };
  } catch (err) {
    if (err instanceof AppError) return { error: { code: err.code, message: err.message, details: err.details } };
    return { error: err instanceof Error ? { name: err.name, message: err.message } : { message: String(err) } };
  }
}

/** Bytes given whole or in pieces (src/offload/index.ts `Bytes`), joined here on the thread. */
type Pieces = Uint8Array | Uint8Array[];
const whole = (b: Pieces): Uint8Array => (!Array.isArray(b) ? b : b.length === 1 ? b[0] : Buffer.concat(b));

export function parseJson({ bytes }: { bytes: Pieces }): TaskResult<unknown> {
  return capture(() => parseJsonBytes(whole(bytes)));
}

/** Moves the given buffers back to the calling thread with the value instead of copying them. */
function moving<T>(value: T, buffers: Array<Uint8Array | undefined>): T {
  if (isMainThread) return value;
  const list = [...new Set(buffers.filter((b): b is Uint8Array => !!b && b.byteOffset === 0 && b.byteLength === b.buffer.byteLength).map((b) => b.buffer))];
  return Piscina.move({
    get [Piscina.transferableSymbol]() {
      return list;
    },
    get [Piscina.valueSymbol]() {
      return value;
    },
  } as never) as T;
}

export function prepareUploadJson({ bytes, mode, prices }: { bytes: Pieces; mode: RedactMode; prices?: PriceTable }): TaskResult<PreparedUpload> {
  const r = capture(() => prepare(whole(bytes), mode, prices));
  if (!('value' in r)) return r;
  const u = r.value.upload;
  return moving(r, [u.markdown, u.rawData, u.sessionData, r.value.exchangeIndex ?? undefined]);
}

const view = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

/** A session of an archive validated, redacted and hashed (src/domain/import-session.ts). */
export function prepareImport(input: {
  json: ImportedFields;
  markdown: Uint8Array;
  raw: Uint8Array;
  sessionData: Uint8Array | null;
  mode: RedactMode;
  prices?: PriceTable;
}): TaskResult<PreparedUpload> {
  const r = capture(() =>
    prepareImportedSession(
      { json: input.json, markdown: view(input.markdown), raw: view(input.raw), sessionData: input.sessionData && view(input.sessionData) },
      input.mode,
      input.prices,
    ),
  );
  if (!('value' in r)) return r;
  const u = r.value.upload;
  return moving(r, [u.markdown, u.rawData, u.sessionData, r.value.exchangeIndex ?? undefined]);
}

export interface DocumentBatches {
  /** Every document id of the session (what is not among them is tombstoned). */
  ids: string[];
  /** The documents to push, as JSON arrays (UTF-8) of at most about `batchBytes` each. */
  batches: Uint8Array[];
  /** How many documents the batches hold. */
  count: number;
}

/**
 * A session's documents to build: `markdown` as it travels (one buffer, or pieces to a thread) and
 * `have` as it travels (a Map here, its entries to a thread).
 */
export interface DocumentsInput<M = Pieces, H = Array<[string, string]>> {
  row: IndexableSession;
  markdown: M;
  syncedAt: number;
  /** Fragments the index has (id → hash); documents with the same hash are left out unless `force`. */
  have: H;
  force: boolean;
  batchBytes: number;
  /** The index has an embedder: each document carries an empty `_vectors` entry. */
  vectors?: boolean;
  /** Recent index: the main one holds no copy of the session (SessionDocument.noMainCopy). */
  noMainCopy?: boolean;
}

export function documents(input: DocumentsInput): DocumentBatches {
  const row = { ...input.row, createdAt: new Date(input.row.createdAt) };
  const have = new Map(input.have);
  const md = whole(input.markdown);
  const docs = toDocuments(row, Buffer.from(md.buffer, md.byteOffset, md.byteLength).toString('utf8'), input.syncedAt, { noMainCopy: input.noMainCopy });
  const batches: string[] = [];
  let batch: string[] = [];
  let bytes = 0;
  let count = 0;
  for (const doc of docs) {
    if (!input.force && have.get(doc.id) === doc.hash) continue;
    batch.push(JSON.stringify(input.vectors ? withoutVector(doc) : doc));
    count++;
    bytes += doc.content.length + 512;
    if (bytes >= input.batchBytes) {
      batches.push(`[${batch.join(',')}]`);
      batch = [];
      bytes = 0;
    }
  }
  if (batch.length) batches.push(`[${batch.join(',')}]`);
  // Bytes in one buffer that moves back whole: strings would be copied on the event loop.
  const all = Buffer.allocUnsafeSlow(batches.reduce((n, b) => n + Buffer.byteLength(b), 0));
  let at = 0;
  const views = batches.map((b) => {
    const n = all.write(b, at);
    at += n;
    return all.subarray(at - n, at);
  });
  return moving({ ids: docs.map((d) => d.id), batches: views, count }, [all]);
}

/** Token usage of a raw log as stored (src/domain/upload.ts `usageOfRaw`: never throws). */
export function usage(input: { raw: Uint8Array; prices: PriceTable }): SessionUsage | null {
  return usageOfRaw(input.raw, input.prices);
}

/** Goes on with a session's exchange scan (src/services/exchanges.ts) over the next chunks. */
export function exchangeScan(input: { state: ScanState | null; chunks: Uint8Array[] }): ScanState {
  const scanner = input.state ? ExchangeScanner.resume(input.state) : new ExchangeScanner();
  for (const c of input.chunks) scanner.feed(Buffer.from(c.buffer, c.byteOffset, c.byteLength));
  return scanner.state();
}
