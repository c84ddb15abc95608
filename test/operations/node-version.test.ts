/**
 * An unsupported Node.js is refused by `npm start`, the service's entry point and the admin CLI:
 * exit code 1 and one line naming the required and the running version, before a database or a
 * file is touched. The old runtime is played by a `--require` shim that makes `process.versions.node`
 * say 20.19.0 (the check reads nothing else). The built entry point (`node dist/src/main.js`) is
 * compiled for the test into a temporary directory laid out as the build lays out the checkout.
 */
import { execFile, execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT_URL, rootConnection } from '../support/db';
import { CLI_MAIN, TSX } from '../support/cli';
import { ROOT } from '../support/paths';

const engines = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
const LINE = `Session Archive needs Node.js ${engines} (package.json engines); this is Node.js 20.19.0. Install a supported Node.js.`;

let scratch: string;
let dbName: string;
let databaseUrl: string;

async function tablesOf(name: string): Promise<number> {
  const conn = await rootConnection();
  try {
    const rows = await conn.query<Array<{ n: bigint }>>('SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = ?', [name]);
    return Number(rows[0].n);
  } finally {
    await conn.end();
  }
}

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-node-version-'));
  fs.writeFileSync(path.join(scratch, 'old-node.cjs'), "Object.defineProperty(process.versions, 'node', { value: '20.19.0' });\n");
  dbName = `sa_nodever_${crypto.randomBytes(5).toString('hex')}`;
  databaseUrl = `${ROOT_URL}/${dbName}`;
  const conn = await rootConnection();
  try {
    // An empty database: the service and the CLI would create their tables in it on a supported Node.js.
    await conn.query(`CREATE DATABASE \`${dbName}\``);
  } finally {
    await conn.end();
  }
});

afterAll(async () => {
  const conn = await rootConnection();
  try {
    await conn.query(`DROP DATABASE IF EXISTS \`${dbName}\``);
  } finally {
    await conn.end();
  }
  fs.rmSync(scratch, { recursive: true, force: true });
});

function runOld(command: string, args: string[], cwd = ROOT): Promise<{ code: number; stdout: string; stderr: string }> {
  const dataDir = path.join(scratch, 'data');
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    NODE_OPTIONS: `--require ${path.join(scratch, 'old-node.cjs')}`,
    DATABASE_URL: databaseUrl,
    JWT_SECRET: 'node-version-test-secret-long-enough',
    DATA_DIR: dataDir,
    PORT: '0',
  };
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

async function expectRefused(r: { code: number; stderr: string }): Promise<void> {
  expect(r.code).toBe(1);
  expect(r.stderr).toBe(`${LINE}\n`);
  expect(await tablesOf(dbName)).toBe(0);
  expect(fs.existsSync(path.join(scratch, 'data'))).toBe(false);
}

test('the admin CLI refuses an unsupported Node.js before touching the database', async () => {
  await expectRefused(await runOld(TSX, [CLI_MAIN, 'users', 'create', '--email', 'old-node@example.com']));
});

test('the service refuses an unsupported Node.js before touching the database', async () => {
  await expectRefused(await runOld(TSX, [path.join(ROOT, 'src', 'main.ts')]));
});

test('npm start refuses an unsupported Node.js before its build step', async () => {
  const generated = path.join(ROOT, 'src', 'generated');
  const before = fs.statSync(generated).mtimeMs;
  const r = await runOld('npm', ['start']);
  await expectRefused(r);
  // The build (prisma generate, tsc, vite) never began.
  expect(r.stdout).not.toMatch(/prisma generate|npm run generate/);
  expect(fs.statSync(generated).mtimeMs).toBe(before);
});

test('the built service (node dist/src/main.js) refuses an unsupported Node.js before touching the database', async () => {
  // What `npm run build` makes of the service, in a checkout of its own: package.json at the top,
  // the compiled sources under dist/, and the copy of the check that the build script makes.
  const checkout = path.join(scratch, 'checkout');
  fs.mkdirSync(checkout);
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(checkout, 'package.json'));
  execFileSync(
    process.execPath,
    [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(ROOT, 'tsconfig.build.json'), '--outDir', path.join(checkout, 'dist')],
    {
      cwd: ROOT,
      stdio: 'ignore',
    },
  );
  const build = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { build: string } }).scripts.build;
  expect(build).toContain('cp src/check-node.cjs dist/src/');
  fs.copyFileSync(path.join(ROOT, 'src', 'check-node.cjs'), path.join(checkout, 'dist', 'src', 'check-node.cjs'));
  expect(fs.existsSync(path.join(checkout, 'dist', 'src', 'main.js'))).toBe(true);

  await expectRefused(await runOld(process.execPath, [path.join('dist', 'src', 'main.js')], checkout));
}, 300_000);
