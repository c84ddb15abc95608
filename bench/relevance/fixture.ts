/**
 * The relevance fixture: sessions (sessions/*.md, SpecStory's markdown) and the questions asked of
 * them weeks later (questions.ts), each with the session that answers it.
 *
 * Sessions named `large-*.md` are long working days: their few hand-written exchanges are followed
 * by the tool output such days pile up (test runs, installs, logs), generated here so that each
 * is well over 64 KB. Their vocabulary touches most topics of the archive, which is what such
 * sessions do to a search that only asks whether a word is somewhere in a session.
 */
import fs from 'node:fs';
import path from 'node:path';
import { rng } from '../corpus';

export interface FixtureSession {
  /** File name without `.md`: what questions name. */
  id: string;
  name: string;
  markdown: string;
}

const DIR = path.join(__dirname, 'sessions');
/** Large sessions are filled up to at least this many characters. */
const LARGE_MIN = 110_000;

const seedOf = (s: string) => [...s].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0, 7);

// What test names in a real suite are made of: the project's whole domain.
const SUBJECTS = [
  'the checkout handler',
  'the webhook endpoint',
  'the login flow',
  'the session middleware',
  'the rate limiter',
  'the retry helper',
  'the invoice renderer',
  'the export job',
  'the search box',
  'the audit log',
  'the migration runner',
  'the cache layer',
  'the upload route',
  'the mail queue',
  'the feature flag service',
  'the config loader',
  'the dashboard chart',
  'the orders table',
  'the token refresher',
  'the thumbnail worker',
  'the CSV exporter',
  'the websocket hub',
  'the payment client',
  'the slug helper',
];
const VERBS = [
  'returns 429 when',
  'retries twice when',
  'redirects to /login when',
  'rejects the request when',
  'logs a warning when',
  'falls back to the default when',
  'keeps the previous value when',
  'times out when',
  'sends one email when',
  'updates the index when',
  'does not crash when',
  'renders a spinner when',
  'skips the row when',
  'acquires the lock when',
  'rolls back the transaction when',
];
const CONDITIONS = [
  'the upstream answers 503',
  'the cookie is missing',
  'the token expired',
  'the body is too large',
  'the event arrives twice',
  'redis is down',
  'the column is null',
  'the user has no orders',
  'the locale is de-DE',
  'the header is malformed',
  'the queue is full',
  'the signature does not match',
  'the page is past the end',
  'two replicas run the job',
  'the file has a BOM',
  'the clock changes to summer time',
  'the proxy strips the header',
  'the connection is reset',
  'the input is empty',
  'the cache is stale',
];
const FILES = ['src/api', 'src/lib', 'src/db', 'src/jobs', 'web/src/components', 'web/src/pages', 'src/http', 'src/billing'];
const PACKAGES = [
  'express',
  'pino',
  'zod',
  'ioredis',
  'bullmq',
  'stripe',
  'react',
  'react-dom',
  'vite',
  'vitest',
  'prisma',
  'sharp',
  'luxon',
  'undici',
  'ws',
  'helmet',
  'cors',
  'dataloader',
];

const pick = <T>(r: () => number, xs: T[]): T => xs[Math.floor(r() * xs.length)];

/** One exchange of tool output: a test run, an install or a log tail. */
function fillerExchange(r: () => number, n: number): string {
  const kind = n % 3;
  let ask: string;
  let command: string;
  let lines: string[];
  if (kind === 0) {
    ask = 'Run the whole test suite again.';
    command = 'npx jest';
    lines = [];
    for (let f = 0; f < 6; f++) {
      const file = `${pick(r, FILES)}/${pick(r, SUBJECTS).replace(/^the /, '').replace(/ /g, '-')}.test.ts`;
      lines.push(`PASS ${file}`);
      for (let t = 0; t < 6; t++) lines.push(`  ✓ ${pick(r, SUBJECTS)} ${pick(r, VERBS)} ${pick(r, CONDITIONS)} (${1 + Math.floor(r() * 90)} ms)`);
    }
    lines.push(`Tests: ${36 * (1 + (n % 4))} passed`);
  } else if (kind === 1) {
    ask = 'Install the dependencies and rebuild.';
    command = 'npm ci && npm run build';
    lines = [];
    for (let i = 0; i < 14; i++)
      lines.push(`npm http fetch GET 200 https://registry.npmjs.org/${pick(r, PACKAGES)} ${10 + Math.floor(r() * 400)}ms (cache hit)`);
    lines.push(`added ${800 + Math.floor(r() * 400)} packages in ${5 + Math.floor(r() * 20)}s`, '> tsc -p tsconfig.build.json', 'build finished');
  } else {
    ask = 'Show me the last lines of the service log.';
    command = 'kubectl logs deploy/api --tail=30';
    lines = [];
    for (let i = 0; i < 24; i++) {
      const ms = 2 + Math.floor(r() * 300);
      lines.push(
        `{"level":30,"time":17${String(100000 + Math.floor(r() * 899999))},"msg":"request completed","route":"/${pick(r, FILES).split('/').pop()}","status":${pick(r, [200, 200, 200, 201, 204, 304, 400, 401, 404, 429, 502])},"ms":${ms}}`,
      );
    }
  }
  const output = ['```', `$ ${command}`, ...lines, '```'].join('\n');
  return (
    `_**User**_\n\n${ask}\n\n---\n\n_**Agent (model claude-sonnet-4-5)**_\n\n` +
    `<details><summary>Tool use: **run_terminal_cmd** • Run command: ${command}</summary>\n\n${output}\n\n</details>\n\nDone; nothing new failed.\n\n---\n\n`
  );
}

/** A large session's hand-written exchanges with generated tool output after them. */
function filled(id: string, markdown: string): string {
  const r = rng(seedOf(id));
  let out = markdown.endsWith('\n') ? markdown : `${markdown}\n`;
  for (let n = 0; out.length < LARGE_MIN; n++) out += fillerExchange(r, n);
  return out;
}

/** The title line SpecStory writes, without its time stamp: the session's name. */
const nameOf = (markdown: string, id: string) => /^# (.+?)(?: \(\d{4}-\d\d-\d\d [\d:]+Z\))?$/m.exec(markdown)?.[1] ?? id;

export function loadSessions(): FixtureSession[] {
  return fs
    .readdirSync(DIR)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => {
      const id = f.slice(0, -3);
      const raw = fs.readFileSync(path.join(DIR, f), 'utf8');
      const markdown = id.startsWith('large-') ? filled(id, raw) : raw;
      return { id, name: nameOf(raw, id), markdown };
    });
}
