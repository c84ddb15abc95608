/** The bytes of an import's archive as they come (src/services/imports.ts): counted, admitted, hashed. */
import crypto from 'node:crypto';
import { Transform } from 'node:stream';
import { AppError } from '../errors';
import type { BodyGate } from '../domain/body-gate';
import { ownedBuffer } from '../offload';

/**
 * Counts the bytes of the archive as they come: over the limit → 413; silent too long → 408. Each
 * chunk is taken from upload admission (`gate`) and read on only when admission lets it: the
 * import waits for room like an upload (the wait does not count as silence).
 */
export function limiter(maxBytes: number, idleMs: number, onBytes: (n: number) => void, gate: BodyGate | undefined): Transform {
  let n = 0;
  let timer: NodeJS.Timeout | undefined;
  const t: Transform = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      n += chunk.length;
      arm();
      if (n > maxBytes) return cb(new AppError('PAYLOAD_TOO_LARGE', `Archive too large: more than MAX_IMPORT_BYTES (${maxBytes} bytes)`));
      onBytes(n);
      if (!gate || gate.take(chunk.length)) return cb(null, chunk);
      clearTimeout(timer);
      gate.onResume(() => {
        arm();
        cb(null, chunk);
      });
    },
    flush(cb) {
      clearTimeout(timer);
      cb();
    },
    destroy(err, cb) {
      clearTimeout(timer);
      cb(err);
    },
  });
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => t.destroy(new AppError('REQUEST_TIMEOUT', `No archive data for ${Math.round(idleMs / 1000)} s`)), idleMs);
    timer.unref();
  };
  arm();
  return t;
}

/** An entry's bytes, at most `max` (else null after reading it off), with their sha256. */
export async function readEntry(stream: AsyncIterable<Buffer>, size: number, max: number): Promise<{ bytes: Buffer | null; sha256: string; size: number }> {
  const h = crypto.createHash('sha256');
  const buf = size <= max ? ownedBuffer(Math.max(1, size)) : null;
  let n = 0;
  for await (const chunk of stream) {
    h.update(chunk);
    if (buf && n + chunk.length <= size) chunk.copy(buf, n);
    n += chunk.length;
  }
  return { bytes: buf && n === size ? buf.subarray(0, size) : null, sha256: h.digest('hex'), size: n };
}
