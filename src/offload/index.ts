import os from 'node:os';
import path from 'node:path';
import Piscina from 'piscina';
import type { RedactMode } from '../redact';
import type { IndexableSession, SessionDocument } from '../search/documents';
import type { PreparedUpload } from '../services/upload-input';
import * as tasks from './tasks';
import type { DocumentBatches } from './tasks';

/**
 * CPU-heavy work on large inputs, off the event loop (contract §16: one upload must not stall
 * everyone else). Bodies and sessions from OFFLOAD_MIN_BYTES up run on a small pool of worker
 * threads (piscina); smaller ones run inline, where a thread hop would cost more than it saves.
 */
export const OFFLOAD_MIN_BYTES = 1024 * 1024;

/** A JSON body left unparsed by src/http/body.ts: its route prepares it off the event loop. */
export class DeferredJson {
  constructor(readonly bytes: Buffer) {}
}

export interface Offload {
  /** Strict UTF-8 + JSON, with the body's sha256 when asked (Idempotency-Key). */
  parseJson(bytes: Buffer, withDigest: boolean): Promise<{ value: unknown; digest?: string }>;
  /** sha256 (hex) of the bytes. */
  digest(bytes: Buffer): Promise<string>;
  /** An upload body validated, redacted and hashed (src/services/upload-input.ts). */
  prepareUploadJson(bytes: Buffer, mode: RedactMode): Promise<PreparedUpload>;
  /** Index documents of one session, serialised in batches (src/search/documents.ts). */
  documents(input: DocumentsInput): Promise<DocumentBatches>;
  close(): Promise<void>;
}

export interface DocumentsInput {
  row: IndexableSession;
  markdown: Buffer;
  syncedAt: number;
  /** Fragments the index has (id → hash); documents with the same hash are left out unless `force`. */
  have: Map<string, string>;
  force: boolean;
  batchBytes: number;
}

const asBuffer = (u: Uint8Array): Buffer => (Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength));

/** The whole ArrayBuffer is the bytes' own: it can move to a thread (else it is copied). */
const ownsBuffer = (b: Uint8Array) => b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && !(b.buffer instanceof SharedArrayBuffer);

/** Buffers come back from a thread as Uint8Arrays. */
function revive(p: PreparedUpload): PreparedUpload {
  const u = p.upload;
  u.markdown = asBuffer(u.markdown);
  u.rawData = asBuffer(u.rawData);
  if (u.sessionData) u.sessionData = asBuffer(u.sessionData);
  if (u.startedAt && !(u.startedAt instanceof Date)) u.startedAt = new Date(u.startedAt);
  if (u.endedAt && !(u.endedAt instanceof Date)) u.endedAt = new Date(u.endedAt);
  return p;
}

/** Runs every task on the calling thread (tests, CLI one-offs, and small inputs). */
export const inlineOffload: Offload = {
  async parseJson(bytes, withDigest) {
    return unwrap(tasks.parseJson({ bytes, withDigest }));
  },
  async digest(bytes) {
    return tasks.digest({ bytes }).digest;
  },
  async prepareUploadJson(bytes, mode) {
    return unwrap(tasks.prepareUploadJson({ bytes, mode }));
  },
  async documents(input) {
    return tasks.documents({ ...input, have: [...input.have] });
  },
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
  const run = <T>(name: string, arg: unknown, transfer: Uint8Array[] = []) =>
    get().run(arg, { name, transferList: transfer.filter(ownsBuffer).map((b) => b.buffer as ArrayBuffer) }) as Promise<T>;
  const small = (b: Uint8Array) => b.byteLength < OFFLOAD_MIN_BYTES;

  return {
    async parseJson(bytes, withDigest) {
      if (small(bytes)) return inlineOffload.parseJson(bytes, withDigest);
      return unwrap(await run<tasks.TaskResult<{ value: unknown; digest?: string }>>('parseJson', { bytes, withDigest }, [bytes]));
    },
    async digest(bytes) {
      if (small(bytes)) return inlineOffload.digest(bytes);
      // The bytes are copied, not moved: the caller still needs them.
      return (await run<{ digest: string }>('digest', { bytes })).digest;
    },
    async prepareUploadJson(bytes, mode) {
      if (small(bytes)) return inlineOffload.prepareUploadJson(bytes, mode);
      return revive(unwrap(await run<tasks.TaskResult<PreparedUpload>>('prepareUploadJson', { bytes, mode }, [bytes])));
    },
    async documents(input) {
      if (small(input.markdown)) return inlineOffload.documents(input);
      return run('documents', { ...input, have: [...input.have] }, [input.markdown]);
    },
    async close() {
      const p = pool;
      pool = undefined;
      await p?.destroy();
    },
  };
}

export type { DocumentBatches, SessionDocument };
