/**
 * The export archive (docs/export-import.md): a tar file whose bytes depend only on the data
 * it holds. Paths, canonical JSON, entry times and sizes, and the checks an import makes of the
 * manifest and of project.json (session.json's schema is src/api/schemas/archive.ts). Pure: the tar encoding itself is in src/services/exports.ts.
 */
import crypto from 'node:crypto';
import { z } from 'zod';
import { invalid } from '../errors';
import { PROJECT_COLORS, PROJECT_ICONS, PROJECT_ID_RE } from './project';
import { SESSION_ID_RE } from './session';

export const ARCHIVE_FORMAT = 'session-archive-export';
export const ARCHIVE_VERSION = 1;
export const MANIFEST_PATH = 'manifest.json';
/** Modes of every entry (owner and group are 0, names empty). */
export const FILE_MODE = 0o644;
export const DIR_MODE = 0o755;
/** A tar block; every header is one, every file's data is padded to whole blocks. */
const BLOCK = 512;
/** Two zero blocks end a tar. */
export const END_BYTES = 2 * BLOCK;
/**
 * The manifest is checked whole before anything is written, and what it lists is kept while the
 * files arrive (about 150 bytes per session): its size is bounded (64 MiB: some 400,000 files).
 */
export const MANIFEST_MAX_BYTES = 64 * 1024 * 1024;
/** session.json and project.json are read whole. */
export const JSON_FILE_MAX_BYTES = 4 * 1024 * 1024;

/** The files of a session, in path order (markdown.md < raw < session-data.json < session.json). */
export const SESSION_FILES = ['markdown.md', 'raw', 'session-data.json', 'session.json'] as const;
export type SessionFile = (typeof SESSION_FILES)[number];

export const projectDir = (projectId: string) => `projects/${projectId}/`;
export const projectJsonPath = (projectId: string) => `projects/${projectId}/project.json`;
export const sessionsDir = (projectId: string) => `projects/${projectId}/sessions/`;
export const sessionDir = (projectId: string, sessionId: string) => `projects/${projectId}/sessions/${sessionId}/`;
export const sessionFilePath = (projectId: string, sessionId: string, file: SessionFile) => `${sessionDir(projectId, sessionId)}${file}`;

/** Byte order of ASCII paths (project and session ids are ASCII): how entries are sorted. */
const byPath = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Project ids in the order their entries come: by `projects/<id>/`, not by the id alone. */
export const byProjectDir = (a: string, b: string): number => byPath(`${a}/`, `${b}/`);

/** Values with object keys sorted (recursively), so that JSON.stringify is canonical. */
function sortedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (v && typeof v === 'object' && !(v instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort(byPath)) {
      Object.defineProperty(out, k, { value: sortedKeys((v as Record<string, unknown>)[k]), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return v;
}

/** JSON with sorted keys, two-space indented, ending in a newline: the same value is always the same bytes. */
export const canonicalJson = (v: unknown): Buffer => Buffer.from(`${JSON.stringify(sortedKeys(v), null, 2)}\n`, 'utf8');

/** Files of a manifest written (or checked) per turn of the event loop. */
export const MANIFEST_SLICE = 2000;

/** A turn of the event loop (what a long loop awaits between slices). */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The manifest's canonical JSON (the bytes canonicalJson gives), built a slice of files at a time
 * with a turn of the event loop between slices: an archive of many sessions has a manifest of
 * tens of MB, and one JSON.stringify of it would hold the loop for hundreds of ms.
 */
export async function manifestJson(m: Manifest): Promise<Buffer> {
  const parts: Buffer[] = [Buffer.from('{\n  "files": [', 'utf8')];
  for (let i = 0; i < m.files.length; i += MANIFEST_SLICE) {
    if (i) await nextTurn();
    let text = '';
    for (const f of m.files.slice(i, i + MANIFEST_SLICE)) {
      text += `${text || i ? ',' : ''}\n    {\n      "path": ${JSON.stringify(f.path)},\n      "sha256": ${JSON.stringify(f.sha256)},\n      "size": ${JSON.stringify(f.size)}\n    }`;
    }
    parts.push(Buffer.from(text, 'utf8'));
  }
  const tail = { format: m.format, projects: m.projects, sessions: m.sessions, version: m.version };
  parts.push(
    Buffer.from(
      `${m.files.length ? '\n  ]' : ']'},\n${Object.entries(tail)
        .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`)
        .join(',\n')}\n}\n`,
      'utf8',
    ),
  );
  return Buffer.concat(parts);
}

export const sha256 = (b: Uint8Array): string => crypto.createHash('sha256').update(b).digest('hex');

/** Bytes a file entry takes in the tar: its header and its data padded to whole blocks. */
export const fileEntryBytes = (size: number): number => BLOCK + Math.ceil(size / BLOCK) * BLOCK;

/**
 * A path fits a plain ustar header (100 bytes of name, 155 of prefix split at a slash), so no
 * extended header is needed and sizes are known in advance. Every path of an archive does: ids
 * are ASCII, a project id is at most 128 characters.
 */
export function fitsUstar(path: string): boolean {
  if (!/^[\x20-\x7e]+$/.test(path)) return false;
  let name = path;
  let prefix = '';
  while (name.length > 100) {
    const i = name.indexOf('/');
    if (i === -1) return false;
    prefix += prefix ? `/${name.slice(0, i)}` : name.slice(0, i);
    name = name.slice(i + 1);
  }
  return name.length <= 100 && prefix.length <= 155;
}

/** Whole seconds: tar keeps times to the second (floor, as the tar encoder does). */
export const tarTime = (d: Date): Date => new Date(Math.floor(d.getTime() / 1000) * 1000);

export const latest = (dates: Iterable<Date>, floor: Date = new Date(0)): Date => {
  let t = floor;
  for (const d of dates) if (d.getTime() > t.getTime()) t = d;
  return t;
};

// ---------------------------------------------------------------------------------------------
// The JSON files

export interface ManifestFile {
  path: string;
  size: number;
  sha256: string;
}

export interface Manifest {
  format: typeof ARCHIVE_FORMAT;
  version: typeof ARCHIVE_VERSION;
  projects: number;
  sessions: number;
  files: ManifestFile[];
}

type ProjectOwnerJson = { type: 'user'; name: string | null; email: string } | { type: 'team'; name: string };

export interface ProjectJson {
  name: string;
  icon: string;
  color: string;
  owner: ProjectOwnerJson;
  createdAt: string;
  updatedAt: string;
}

const ISO = z.iso.datetime({ offset: true });
const SHA256 = z.string().regex(/^[0-9a-f]{64}$/);

/** What an archive path may name: a project file or one of a session's files. */
type ArchivePath = { kind: 'project'; projectId: string } | { kind: 'session'; projectId: string; sessionId: string; file: SessionFile };

/** The meaning of a file path of an archive, or null when it is none an archive has. */
export function parseArchivePath(path: string): ArchivePath | null {
  const m = /^projects\/([^/]+)\/(?:project\.json|sessions\/([^/]+)\/([^/]+))$/.exec(path);
  if (!m || !PROJECT_ID_RE.test(m[1])) return null;
  if (m[2] === undefined) return { kind: 'project', projectId: m[1] };
  if (!SESSION_ID_RE.test(m[2]) || m[2] !== m[2].toLowerCase()) return null;
  if (!(SESSION_FILES as readonly string[]).includes(m[3])) return null;
  return { kind: 'session', projectId: m[1], sessionId: m[2], file: m[3] as SessionFile };
}

/** A directory entry's path (with or without its slash) of an archive, or false. */
export function isArchiveDir(path: string): boolean {
  const p = path.endsWith('/') ? path : `${path}/`;
  const m = /^projects\/(?:([^/]+)\/(?:sessions\/(?:([^/]+)\/)?)?)?$/.exec(p);
  return !!m && (m[1] === undefined || PROJECT_ID_RE.test(m[1])) && (m[2] === undefined || SESSION_ID_RE.test(m[2]));
}

const ManifestSchema = z.object({
  format: z.string(),
  version: z.unknown(),
  projects: z.int().min(0),
  sessions: z.int().min(0),
  files: z.array(z.unknown()),
});
const ManifestFileSchema = z.object({ path: z.string().max(300), size: z.int().min(0), sha256: SHA256 });

/** The manifest's fields but its files: of this format and version. Throws an Error with the message to show. */
export function checkManifestHead(value: unknown): { projects: number; sessions: number; files: unknown[] } {
  const r = ManifestSchema.safeParse(value);
  const formatError = (format: unknown) => new Error(`Not a session archive export: format is ${JSON.stringify(format)}, expected "${ARCHIVE_FORMAT}"`);
  if (!r.success) {
    const format = (value as { format?: unknown })?.format;
    if (format !== undefined && format !== ARCHIVE_FORMAT) throw formatError(format);
    throw new Error(`manifest.json is not a valid manifest: ${r.error.issues[0]?.path.join('.') || 'root'}: ${r.error.issues[0]?.message}`);
  }
  const m = r.data;
  if (m.format !== ARCHIVE_FORMAT) throw formatError(m.format);
  if (m.version !== ARCHIVE_VERSION) throw new Error(`Unsupported archive version ${JSON.stringify(m.version)}: this server reads version ${ARCHIVE_VERSION}`);
  return m;
}

/** The i-th file of a manifest: its fields, and a path an archive has. Throws an Error with the message to show. */
export function checkManifestFile(value: unknown, i: number): ManifestFile {
  const f = ManifestFileSchema.safeParse(value);
  if (!f.success) throw new Error(`manifest.json is not a valid manifest: ${['files', i, ...f.error.issues[0].path].join('.')}: ${f.error.issues[0].message}`);
  if (!parseArchivePath(f.data.path))
    throw new Error(`Invalid path in manifest: ${JSON.stringify(f.data.path)} (every file must be a project.json or a session file under projects/)`);
  return f.data;
}

/**
 * The manifest, checked whole: of this format and version, every path one an archive has (nothing
 * outside `projects/`), each listed once. Its files are checked a slice at a time, with a turn of
 * the event loop between slices. Throws an Error with the message to show. (An import reads the
 * manifest as it arrives instead: src/services/import-manifest.ts.)
 */
export async function parseManifest(bytes: Buffer): Promise<Manifest> {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new Error('manifest.json is not valid JSON');
  }
  const m = checkManifestHead(value);
  const files: ManifestFile[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < m.files.length; i++) {
    if (i && i % MANIFEST_SLICE === 0) await nextTurn();
    const f = checkManifestFile(m.files[i], i);
    if (seen.has(f.path)) throw new Error(`Path listed twice in manifest: ${f.path}`);
    seen.add(f.path);
    files.push(f);
  }
  return { format: ARCHIVE_FORMAT, version: ARCHIVE_VERSION, projects: m.projects, sessions: m.sessions, files };
}

export const ProjectJsonSchema = z.object({
  name: z.string().min(1).max(255),
  icon: z.enum(PROJECT_ICONS),
  color: z.enum(PROJECT_COLORS),
  createdAt: ISO,
  updatedAt: ISO,
  owner: z.unknown().optional(),
});

/** A JSON file of the archive, checked against its schema; throws a VALIDATION_ERROR AppError naming the problem. */
export function parseArchiveJson<T extends z.ZodType>(schema: T, bytes: Buffer, what: string): z.output<T> {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw invalid(`${what} is not valid JSON`);
  }
  const r = schema.safeParse(value);
  if (!r.success) throw invalid(`${what} is invalid: ${r.error.issues[0]?.path.join('.') || 'root'}: ${r.error.issues[0]?.message}`);
  return r.data;
}

/** A tag this service makes (`W/"<40 hex>"`): only such a tag is kept from an archive. */
export const WELL_FORMED_ETAG = /^W\/"[0-9a-f]{40}"$/;
