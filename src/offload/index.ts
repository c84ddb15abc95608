import os from 'node:os';
import path from 'node:path';
import Piscina from 'piscina';
import type { RedactMode } from '../redact';
import type { ScanState } from '../domain/exchanges';
import type { PreparedUpload } from '../domain/upload';
import type { ImportParts } from '../domain/import-session';
import type { PriceTable, SessionUsage } from '../domain/usage';
import { prepareUpload } from '../domain/upload';
import * as tasks from './tasks';
import type { DocumentBatches } from './tasks';

/**
 * CPU-heavy work on large inputs, off the event loop (one upload must not stall
 * everyone else). Bodies and sessions from OFFLOAD_MIN_BYTES up run on a small pool of worker
 * threads (piscina); smaller ones run inline, where a thread hop would cost more than it saves.
 * One exception: a raw log's token usage is always read on a thread, however small the upload
 * (reading it parses JSON lines of the client's making, a cost that grows with the log and that
 * the event loop is kept clear of); a small upload is prepared inline and its raw log copied to a
 * thread for that.
 */
export const OFFLOAD_MIN_BYTES = 1024 * 1024;

/**
 * Bytes for a task: one buffer, or its pieces in order. Large inputs arrive in pieces made by
 * `ownedBuffer`, which move to the thread instead of being copied or joined on the event loop
 * (on this kind of machine, first touching fresh memory costs several ms per MiB).
 */
export type Bytes = Buffer | Buffer[];

export const byteLength = (b: Bytes): number => (Array.isArray(b) ? b.reduce((n, p) => n + p.length, 0) : b.length);

/** One buffer of the bytes (joined when in pieces: a copy). */
export const joined = (b: Bytes): Buffer => (!Array.isArray(b) ? b : b.length === 1 ? b[0] : Buffer.concat(b));

const owned = new WeakSet<ArrayBufferLike>();

/** A buffer with memory of its own (never Node's shared pool), which may later move to a thread. */
export function ownedBuffer(size: number): Buffer {
  const b = Buffer.allocUnsafeSlow(size);
  owned.add(b.buffer);
  return b;
}

/**
 * Gives the memory of buffers made by `ownedBuffer` (or moved back from a thread) back at once,
 * instead of when the garbage collector next finds them: their ArrayBuffers are detached (every
 * view of them is then empty). For large content a caller is done with, so that the next one's
 * bytes do not come on top of them; other buffers are left alone.
 */
export function release(...bufs: Array<Uint8Array | null | undefined>): void {
  for (const b of bufs) {
    if (!b || !owned.has(b.buffer) || b.buffer.byteLength === 0) continue;
    owned.delete(b.buffer);
    // ES2024's ArrayBuffer.prototype.transfer (Node 21+): detaches, and the memory is freed now.
    (b.buffer as ArrayBuffer & { transfer(length: number): ArrayBuffer }).transfer(0);
  }
}

/** A JSON body left unparsed by src/http/body.ts: its route prepares it off the event loop. */
export class DeferredJson {
  constructor(readonly bytes: Bytes) {}
}

export interface Offload {
  /** Strict UTF-8 + JSON. */
  parseJson(bytes: Bytes): Promise<unknown>;
  /** An upload body already parsed (a small one, where it arrived) validated, redacted and hashed, its usage read given prices. */
  prepareUpload(body: unknown, mode: RedactMode, prices?: PriceTable): Promise<PreparedUpload>;
  /** An upload body validated, redacted and hashed, its token usage read given prices (src/domain/upload.ts). */
  prepareUploadJson(bytes: Bytes, mode: RedactMode, prices?: PriceTable): Promise<PreparedUpload>;
  /** A session of an archive validated, redacted and hashed, its usage read given prices (src/domain/import-session.ts); its buffers move. */
  prepareImport(parts: ImportParts, mode: RedactMode, prices?: PriceTable): Promise<PreparedUpload>;
  /** Token usage of a raw log as stored, given prices (src/domain/upload.ts `usageOfRaw`); the caller keeps the bytes. */
  usage(raw: Uint8Array, prices: PriceTable): Promise<SessionUsage | null>;
  /** Index documents of one session, serialised in batches (src/domain/search-documents.ts). */
  documents(input: DocumentsInput): Promise<DocumentBatches>;
  /** A session's exchange scan continued over the next chunks (src/services/exchanges.ts). */
  exchangeScan(state: ScanState | null, chunks: Buffer[]): Promise<ScanState>;
  close(): Promise<void>;
}

type DocumentsInput = tasks.DocumentsInput<Bytes, Map<string, string>>;

const asBuffer = (u: Uint8Array): Buffer => (Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength));

/** The ArrayBuffer is the bytes' own: it can move to a thread (else it is copied). */
const movable = (b: Uint8Array) =>
  owned.has(b.buffer) || (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && !(b.buffer instanceof SharedArrayBuffer));

/** What of the bytes can move to a thread. */
const transferable = (b: Bytes): ArrayBuffer[] => [...new Set((Array.isArray(b) ? b : [b]).filter(movable).map((p) => p.buffer as ArrayBuffer))];

/** A buffer moved back from a thread: its memory is this thread's alone (see `release`). */
const ours = (u: Uint8Array): Buffer => {
  if (u.byteOffset === 0 && u.byteLength === u.buffer.byteLength && !(u.buffer instanceof SharedArrayBuffer)) owned.add(u.buffer);
  return asBuffer(u);
};

/** Buffers come back from a thread as Uint8Arrays. */
function revive(p: PreparedUpload): PreparedUpload {
  const u = p.upload;
  u.markdown = ours(u.markdown);
  u.rawData = ours(u.rawData);
  if (u.sessionData) u.sessionData = ours(u.sessionData);
  if (p.exchangeIndex) p.exchangeIndex = ours(p.exchangeIndex);
  if (u.startedAt && !(u.startedAt instanceof Date)) u.startedAt = new Date(u.startedAt);
  if (u.endedAt && !(u.endedAt instanceof Date)) u.endedAt = new Date(u.endedAt);
  return p;
}

/** The batches come back from a thread as Uint8Arrays over one moved buffer. */
function revived(d: DocumentBatches): DocumentBatches {
  return { ...d, batches: d.batches.map(asBuffer) };
}

/** Runs `task` now; a throw comes back as a rejection, as it would from the worker pool. */
const settled = <T>(task: () => T): Promise<T> => new Promise<T>((resolve) => resolve(task()));

/** Runs every task on the calling thread (tests, CLI one-offs, and small inputs). */
export const inlineOffload: Offload = {
  parseJson: (bytes) => settled(() => unwrap(tasks.parseJson({ bytes }))),
  prepareUpload: (body, mode, prices) => settled(() => prepareUpload(body, mode, prices)),
  usage: (raw, prices) => settled(() => tasks.usage({ raw, prices })),
  prepareUploadJson: (bytes, mode, prices) => settled(() => unwrap(tasks.prepareUploadJson({ bytes, mode, prices }))),
  prepareImport: (parts, mode, prices) => settled(() => unwrap(tasks.prepareImport({ ...parts, mode, prices }))),
  documents: (input) => settled(() => revived(tasks.documents({ ...input, have: [...input.have] }))),
  exchangeScan: (state, chunks) => settled(() => tasks.exchangeScan({ state, chunks })),
  async close() {},
};

/** Errors cross the thread boundary as data (an AppError's code and message survive). */
function unwrap<T>(r: tasks.TaskResult<T>): T {
  if ('error' in r) throw tasks.reviveError(r.error);
  return r.value;
}

export function createOffload(opts: { threads?: number; onError?: (err: unknown) => void } = {}): Offload {
  let pool: Piscina | undefined;
  const threads = Math.max(1, opts.threads ?? Math.min(4, Math.max(1, os.availableParallelism() - 1)));
  const get = () => {
    if (!pool) {
      // Under tsx/ts-jest this file is TypeScript: the thread loads tasks.ts through tsx.
      const ts = __filename.endsWith('.ts');
      pool = new Piscina({
        filename: path.join(__dirname, ts ? 'thread-dev.cjs' : 'tasks.js'),
        minThreads: 0,
        maxThreads: threads,
        idleTimeout: 30_000,
      });
      // A thread that dies outside a task (its task's promise rejects on its own): never a crash.
      pool.on('error', (err: unknown) => opts.onError?.(err));
    }
    return pool;
  };
  // The bytes move to the thread (the caller must not use them afterwards).
  const run = <T>(name: string, arg: unknown, bytes: Bytes) => get().run(arg, { name, transferList: transferable(bytes) }) as Promise<T>;
  const small = (b: Bytes) => byteLength(b) < OFFLOAD_MIN_BYTES;

  const usage = async (raw: Uint8Array, prices: PriceTable): Promise<SessionUsage | null> => {
    if (raw.length === 0) return null;
    // A copy with memory of its own moves to the thread (a view would be cloned with all of its
    // buffer); the caller's bytes stay where they are, to be stored.
    const copy = new Uint8Array(raw);
    return get().run({ raw: copy, prices }, { name: 'usage', transferList: [copy.buffer] }) as Promise<SessionUsage | null>;
  };
  /** A small upload prepared inline, its usage (given prices) read on a thread. */
  const withUsage = async (prepare: () => Promise<PreparedUpload>, prices: PriceTable | undefined): Promise<PreparedUpload> => {
    const prepared = await prepare();
    if (prices) prepared.usage = await usage(prepared.upload.rawData, prices);
    return prepared;
  };

  return {
    async parseJson(bytes) {
      if (small(bytes)) return inlineOffload.parseJson(bytes);
      return unwrap(await run<tasks.TaskResult<unknown>>('parseJson', { bytes }, bytes));
    },
    prepareUpload: (body, mode, prices) => withUsage(() => inlineOffload.prepareUpload(body, mode), prices),
    usage,
    async prepareUploadJson(bytes, mode, prices) {
      if (small(bytes)) return withUsage(() => inlineOffload.prepareUploadJson(bytes, mode), prices);
      return revive(unwrap(await run<tasks.TaskResult<PreparedUpload>>('prepareUploadJson', { bytes, mode, prices }, bytes)));
    },
    async prepareImport(parts, mode, prices) {
      const bytes = [parts.markdown, parts.raw, ...(parts.sessionData ? [parts.sessionData] : [])];
      if (small(bytes)) return withUsage(() => inlineOffload.prepareImport(parts, mode), prices);
      return revive(unwrap(await run<tasks.TaskResult<PreparedUpload>>('prepareImport', { ...parts, mode, prices }, bytes)));
    },
    async documents(input) {
      if (small(input.markdown)) return inlineOffload.documents(input);
      return revived(await run<DocumentBatches>('documents', { ...input, have: [...input.have] }, input.markdown));
    },
    async exchangeScan(state, chunks) {
      if (small(chunks)) return inlineOffload.exchangeScan(state, chunks);
      // Bytes that cannot move (a view into a driver's larger buffer would be cloned with all of
      // that buffer) are copied into buffers of their own first, which then move.
      const own = chunks.map((c) => {
        if (movable(c)) return c;
        const b = ownedBuffer(c.length);
        c.copy(b);
        return b;
      });
      return run<ScanState>('exchangeScan', { state, chunks: own }, own);
    },
    async close() {
      const p = pool;
      pool = undefined;
      await p?.destroy();
    },
  };
}
