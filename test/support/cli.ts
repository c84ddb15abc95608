/**
 * The admin CLI (src/cli/main.ts) run as an operator runs it: a child process through tsx, on a
 * test database, with a small environment of its own (not the test process's), its output
 * collected whole. The tests of the CLI all start it through here.
 */
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './paths';

/** tsx and the CLI's entry point, for a test that starts it some other way (in a terminal). */
export const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
export const CLI_MAIN = path.join(ROOT, 'src', 'cli', 'main.ts');

export interface CliResult {
  /** The exit status (1 when the process ended otherwise, e.g. killed at the timeout). */
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** DATABASE_URL. */
  databaseUrl: string;
  /** More variables, over the defaults (e.g. a test app's storeEnv, or S3 settings). */
  env?: Record<string, string>;
  /** Written to stdin, which is then closed (default: closed at once). */
  input?: string;
  timeoutMs?: number;
}

/** The environment the CLI runs with: the database, the test apps' JWT secret, a scratch DATA_DIR, no logs. */
export function cliEnv(databaseUrl: string, env: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    DATABASE_URL: databaseUrl,
    JWT_SECRET: 'test-secret-that-is-long-enough',
    DATA_DIR: path.join(os.tmpdir(), 'session-archive-cli-test'),
    LOG_LEVEL: 'silent',
    ...env,
  };
}

export function runCli(args: readonly string[], options: CliOptions): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      TSX,
      [CLI_MAIN, ...args],
      { cwd: ROOT, env: cliEnv(options.databaseUrl, options.env), timeout: options.timeoutMs ?? 120_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    child.stdin?.end(options.input ?? '');
  });
}
