/**
 * An import's manifest (docs/export-import.md), read as it arrives: parsed a piece at a time
 * (src/domain/manifest-stream.ts) with a turn of the event loop between pieces, each listed file
 * checked and kept compactly (ListedFiles: about 150 bytes for a session of one file), never the
 * manifest's text or its parsed objects. The manifest's size is bounded (MANIFEST_MAX_BYTES, else 413).
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

/** Per session: a bit per listed file (SESSION_FILES order), and DONE once it was handled. */
export const DONE = 1 << SESSION_FILES.length;
export const fileBit = (f: SessionFile) => 1 << SESSION_FILES.indexOf(f);

/** A typed array grown by half again when full (not doubled: less memory left unused). */
function grown<T extends Float64Array | Int32Array | Uint8Array>(a: T, needed: number, make: (n: number) => T): T {
  if (needed <= a.length) return a;
  const b = make(Math.max(needed, Math.ceil(a.length * 1.5)));
  b.set(a);
  return b;
}

/** A string of its own (a part cut from a longer string would keep all of that alive). */
const own = (s: string): string => Buffer.from(s, 'latin1').toString('latin1');

/**
 * What a manifest lists, kept compactly (no string per file): per project its id (a map of ids),
 * per session a 20-byte key (the project's number and the session id's 16 bytes) in a map, the
 * files it lists and whether it was handled, and per file its size, its sha256 (32 bytes) and
 * whether it arrived, in typed arrays. About 150 bytes for a session of one file, whatever the
 * length of its path. Ids are those an archive path has (ASCII; session ids lowercase UUIDs).
 */
export class ListedFiles {
  private readonly projects = new Map<string, number>();
  private projectIds: string[] = [];
  /** Per project: its project.json's number (index + 1; 0: not listed). */
  private projectFile = new Int32Array(16);
  private readonly sessionIndex = new Map<string, number>();
  /** Per session: the files listed (bits by SESSION_FILES), and DONE once handled. */
  private sessionBits = new Uint8Array(1024);
  /** Per session and file of SESSION_FILES: the file's index + 1 (0: not listed). */
  private sessionFiles = new Int32Array(4 * 1024);
  private sizes = new Float64Array(1024);
  private digests = new Uint8Array(1024 * 32);
  private arrived = new Uint8Array(1024);
  private files = 0;
  private readonly key = Buffer.alloc(20);

  get count(): number {
    return this.files;
  }

  /** Sessions listed. */
  get sessions(): number {
    return this.sessionIndex.size;
  }

  /** The projects listed, by id. */
  get projectIdList(): readonly string[] {
    return this.projectIds;
  }

  private project(projectId: string, create: boolean): number {
    let p = this.projects.get(projectId);
    if (p === undefined && create) {
      p = this.projectIds.length;
      const id = own(projectId);
      this.projects.set(id, p);
      this.projectIds.push(id);
      this.projectFile = grown(this.projectFile, p + 1, (n) => new Int32Array(n));
    }
    return p ?? -1;
  }

  /** The session's 20-byte key (as a string of 20 characters, flat). */
  private sessionKey(p: number, sessionId: string): string {
    this.key.writeUInt32BE(p, 0);
    this.key.write(sessionId.replace(/-/g, ''), 4, 16, 'hex');
    return this.key.toString('latin1');
  }

  private session(projectId: string, sessionId: string, create: boolean): number {
    const p = this.project(projectId, create);
    if (p < 0) return -1;
    const key = this.sessionKey(p, sessionId);
    let s = this.sessionIndex.get(key);
    if (s === undefined && create) {
      s = this.sessionIndex.size;
      this.sessionIndex.set(key, s);
      this.sessionBits = grown(this.sessionBits, s + 1, (n) => new Uint8Array(n));
      this.sessionFiles = grown(this.sessionFiles, 4 * (s + 1), (n) => new Int32Array(n));
    }
    return s ?? -1;
  }

  /** Where a listed path's file number (its index + 1; 0: not listed) is kept, or null (not a path of an archive, or not listed). */
  private slot(path: string, create: boolean): { files: Int32Array; at: number; session: number; bit: number } | null {
    const where = parseArchivePath(path);
    if (!where) return null;
    if (where.kind === 'project') {
      const p = this.project(where.projectId, create);
      return p < 0 ? null : { files: this.projectFile, at: p, session: -1, bit: 0 };
    }
    const s = this.session(where.projectId, where.sessionId, create);
    return s < 0 ? null : { files: this.sessionFiles, at: 4 * s + SESSION_FILES.indexOf(where.file), session: s, bit: fileBit(where.file) };
  }

  /** False when the path is listed already. The path must be one an archive has (parseArchivePath). */
  add(path: string, size: number, sha256: string): boolean {
    const slot = this.slot(path, true)!;
    if (slot.files[slot.at] !== 0) return false;
    const i = this.files++;
    slot.files[slot.at] = i + 1;
    if (slot.session >= 0) this.sessionBits[slot.session] |= slot.bit;
    this.sizes = grown(this.sizes, i + 1, (n) => new Float64Array(n));
    this.arrived = grown(this.arrived, i + 1, (n) => new Uint8Array(n));
    this.digests = grown(this.digests, 32 * (i + 1), (n) => new Uint8Array(n));
    this.sizes[i] = size;
    Buffer.from(this.digests.buffer, this.digests.byteOffset, this.digests.byteLength).write(sha256, i * 32, 32, 'hex');
    return true;
  }

  /** The listed file: its size and sha256 (hex), and whether it came already (marked now). */
  arrive(path: string): { size: number; sha256: string; again: boolean } | null {
    const slot = this.slot(path, false);
    const i = slot ? slot.files[slot.at] - 1 : -1;
    if (i < 0) return null;
    const again = this.arrived[i] === 1;
    this.arrived[i] = 1;
    return { size: this.sizes[i], sha256: Buffer.from(this.digests.buffer, this.digests.byteOffset + i * 32, 32).toString('hex'), again };
  }

  /** The files listed for a session (bits by SESSION_FILES) and DONE once it was handled; 0 when not listed. */
  sessionState(projectId: string, sessionId: string): number {
    const s = this.session(projectId, sessionId, false);
    return s < 0 ? 0 : this.sessionBits[s];
  }

  /** Marks a listed session handled; returns the files it lists. */
  done(projectId: string, sessionId: string): number {
    const s = this.session(projectId, sessionId, false);
    if (s < 0) return 0;
    const bits = this.sessionBits[s];
    this.sessionBits[s] |= DONE;
    return bits;
  }

  /** The directories of the listed sessions not handled, in the manifest's order. */
  *unhandled(): Generator<string> {
    for (const [key, s] of this.sessionIndex) {
      if (this.sessionBits[s] & DONE) continue;
      const b = Buffer.from(key, 'latin1');
      const hex = b.toString('hex', 4);
      yield sessionDir(this.projectIds[b.readUInt32BE(0)], `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`);
    }
  }
}

/**
 * Reads the manifest entry; throws a 400 (not valid, a file not one an archive has, listed twice)
 * or a 413 (larger than MANIFEST_MAX_BYTES, or listing more than `maxBytes` of archive).
 */
export async function readManifest(entry: AsyncIterable<Buffer>, declaredSize: number, maxBytes: number): Promise<ListedFiles> {
  const tooLarge = () =>
    new AppError(
      'PAYLOAD_TOO_LARGE',
      `${MANIFEST_PATH} is larger than ${MANIFEST_MAX_BYTES / 1024 / 1024} MiB: import the archive in parts (export fewer projects at a time with ?projectId= or --project)`,
    );
  if (declaredSize > MANIFEST_MAX_BYTES) throw tooLarge();
  const files = new ListedFiles();
  let fileError: Error | null = null;
  let least = fileEntryBytes(declaredSize) + END_BYTES;
  const parser = manifestParser((value, i) => {
    if (fileError) return;
    try {
      const f = checkManifestFile(value, i);
      if (!files.add(f.path, f.size, f.sha256)) throw new Error(`Path listed twice in manifest: ${f.path}`);
      least += fileEntryBytes(f.size);
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
  return files;
}
