/**
 * An import's manifest (docs/export-import.md), read as it arrives: parsed a piece at a time
 * (src/domain/manifest-stream.ts) with a turn of the event loop between pieces, each listed file
 * checked and kept compactly (its path, size and digest: about 200 bytes), never the manifest's
 * text or its parsed objects. The manifest's size is bounded (MANIFEST_MAX_BYTES, else 413).
 */
import { AppError, invalid } from '../errors';
import {
  checkManifestFile,
  checkManifestHead,
  END_BYTES,
  fileEntryBytes,
  MANIFEST_MAX_BYTES,
  MANIFEST_PATH,
  nextTurn,
  parseArchivePath,
  sessionDir,
  SESSION_FILES,
  type SessionFile,
} from '../domain/archive';
import { manifestParser, ManifestSyntaxError } from '../domain/manifest-stream';

/** Text parsed per turn of the event loop. */
const PIECE = 256 * 1024;

/** The files a manifest lists: path → index; sizes, digests and whether each has arrived, by index. */
export class ListedFiles {
  private readonly index = new Map<string, number>();
  private sizes = new Float64Array(1024);
  private digests = Buffer.alloc(1024 * 32);
  private arrived = new Uint8Array(1024);

  get count(): number {
    return this.index.size;
  }

  /** False when the path is listed already. */
  add(path: string, size: number, sha256: string): boolean {
    if (this.index.has(path)) return false;
    const i = this.index.size;
    if (i === this.sizes.length) {
      const grow = <T extends Float64Array | Uint8Array>(a: T, make: (n: number) => T) => {
        const b = make(a.length * 2);
        b.set(a);
        return b;
      };
      this.sizes = grow(this.sizes, (n) => new Float64Array(n));
      this.arrived = grow(this.arrived, (n) => new Uint8Array(n));
      const d = Buffer.alloc(this.digests.length * 2);
      this.digests.copy(d);
      this.digests = d;
    }
    this.index.set(path, i);
    this.sizes[i] = size;
    this.digests.write(sha256, i * 32, 'hex');
    return true;
  }

  /** The listed file: its size and sha256 (hex), and whether it came already (marked now). */
  arrive(path: string): { size: number; sha256: string; again: boolean } | null {
    const i = this.index.get(path);
    if (i === undefined) return null;
    const again = this.arrived[i] === 1;
    this.arrived[i] = 1;
    return { size: this.sizes[i], sha256: this.digests.toString('hex', i * 32, i * 32 + 32), again };
  }
}

/** Per session directory: a bit per listed file (SESSION_FILES order), and DONE once it was handled. */
export const DONE = 1 << SESSION_FILES.length;
export const fileBit = (f: SessionFile) => 1 << SESSION_FILES.indexOf(f);

export interface ListedManifest {
  files: ListedFiles;
  sessions: Map<string, number>;
}

/**
 * Reads the manifest entry; throws a 400 (not valid, a file not one an archive has, listed twice)
 * or a 413 (larger than MANIFEST_MAX_BYTES, or listing more than `maxBytes` of archive).
 */
export async function readManifest(entry: AsyncIterable<Buffer>, declaredSize: number, maxBytes: number): Promise<ListedManifest> {
  const tooLarge = () =>
    new AppError(
      'PAYLOAD_TOO_LARGE',
      `${MANIFEST_PATH} is larger than ${MANIFEST_MAX_BYTES / 1024 / 1024} MiB: import the archive in parts (export fewer projects at a time with ?projectId= or --project)`,
    );
  if (declaredSize > MANIFEST_MAX_BYTES) throw tooLarge();
  const files = new ListedFiles();
  const sessions = new Map<string, number>();
  let fileError: Error | null = null;
  let least = fileEntryBytes(declaredSize) + END_BYTES;
  const parser = manifestParser((value, i) => {
    if (fileError) return;
    try {
      const f = checkManifestFile(value, i);
      if (!files.add(f.path, f.size, f.sha256)) throw new Error(`Path listed twice in manifest: ${f.path}`);
      least += fileEntryBytes(f.size);
      const p = parseArchivePath(f.path)!;
      if (p.kind === 'session') {
        const dir = sessionDir(p.projectId, p.sessionId);
        sessions.set(dir, (sessions.get(dir) ?? 0) | fileBit(p.file));
      }
    } catch (err) {
      fileError = err as Error;
    }
  });
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let read = 0;
  let root: Record<string, unknown>;
  try {
    for await (const chunk of entry) {
      read += chunk.length;
      if (read > MANIFEST_MAX_BYTES) throw tooLarge();
      for (let at = 0; at < chunk.length; at += PIECE) {
        parser.write(decoder.decode(chunk.subarray(at, at + PIECE), { stream: true }));
        await nextTurn();
      }
    }
    if (read !== declaredSize) throw invalid(`${MANIFEST_PATH} is truncated`);
    parser.write(decoder.decode());
    root = parser.end();
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (err instanceof ManifestSyntaxError) throw invalid(err.message);
    if ((err as { code?: unknown }).code === 'ERR_ENCODING_INVALID_ENCODED_DATA') throw invalid(`${MANIFEST_PATH} is not valid UTF-8`);
    // The tar ended or broke inside the manifest.
    throw invalid(`${MANIFEST_PATH} is truncated`);
  }
  // The fields first (another format or version says more than its files' problems), then the files.
  try {
    checkManifestHead(root);
  } catch (err) {
    throw invalid((err as Error).message);
  }
  if (fileError) throw invalid((fileError as Error).message);
  if (least > maxBytes)
    throw new AppError('PAYLOAD_TOO_LARGE', `Archive too large: its manifest lists ${least} bytes, more than MAX_IMPORT_BYTES (${maxBytes} bytes)`);
  return { files, sessions };
}
