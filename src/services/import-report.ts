/**
 * What an import says it did (docs/export-import.md): per session one outcome (imported, skipped
 * by the conflict rule, or failed), the first errors (at most MAX_REPORTED_ERRORS, each cut to a
 * bounded length, so the answer stays small whatever the archive) and how many there were, and
 * `success` only when nothing failed and nothing was reported.
 */
import { AppError } from '../errors';
import { isDatabaseUnavailable } from '../data/errors';

const MAX_REPORTED_ERRORS = 100;
const MAX_PATH = 512;
const MAX_MESSAGE = 1000;

export interface ImportSummary {
  /** Every session meant to be written was written, and nothing was reported. */
  success: boolean;
  projects: { created: number; existing: number };
  sessions: { created: number; updated: number; skipped: number };
  /** Sessions written (created or updated), skipped by the conflict rule, and not written. */
  imported: number;
  skipped: number;
  failed: number;
  /** The first errors; `errorCount` counts them all. */
  errors: Array<{ path: string; error: string }>;
  errorCount: number;
}

const cut = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

export class ImportReport {
  readonly summary: ImportSummary = {
    success: true,
    projects: { created: 0, existing: 0 },
    sessions: { created: 0, updated: 0, skipped: 0 },
    imported: 0,
    skipped: 0,
    failed: 0,
    errors: [],
    errorCount: 0,
  };

  error(path: string, error: string): void {
    this.summary.errorCount++;
    this.summary.success = false;
    if (this.summary.errors.length < MAX_REPORTED_ERRORS) this.summary.errors.push({ path: cut(path, MAX_PATH), error: cut(error, MAX_MESSAGE) });
  }

  /** A session not written, and why (reported unless that was done already). */
  failed(path: string, error?: string): void {
    this.summary.failed++;
    this.summary.success = false;
    if (error !== undefined) this.error(path, error);
  }

  written(outcome: 'created' | 'updated' | 'skipped'): void {
    this.summary.sessions[outcome]++;
    if (outcome === 'skipped') this.summary.skipped++;
    else this.summary.imported++;
  }
}

/** The server's own text of a database error (the driver's `text`: no SQL, no values), along the cause chain. */
function databaseText(err: unknown): string | null {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 10; depth++) {
    const f = e as { text?: unknown; sqlState?: unknown; cause?: unknown; originalError?: unknown };
    if (typeof f.text === 'string' && typeof f.sqlState === 'string') return f.text;
    e = f.cause ?? f.originalError;
  }
  return null;
}

/**
 * Why this service could not write a session, in words a person can act on: a refusal it states
 * (an AppError's message), the database unavailable or refusing (its own message, never SQL),
 * or the service's own fault (the error's name and message), never the archive's.
 */
export function faultOf(err: unknown): string {
  if (err instanceof AppError) return err.message;
  if (isDatabaseUnavailable(err)) return 'the service could not write it: the database is unavailable';
  const db = databaseText(err);
  if (db !== null) return `the service could not write it: the database refused the write (${db})`;
  const e = err instanceof Error ? err : new Error(String(err));
  return `the service could not write it (${e.name}: ${e.message})`;
}
