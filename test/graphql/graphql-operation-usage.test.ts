/**
 * GraphQL operation usage, for schema review (docs/graphql.md): the service counts each operation
 * per client (`graphql-client-name`, else `unknown`) and day with the coordinates it touches; `GET
 * /api/v1/graphql/usage?days=` lists them for instance administrators; `schema:check --usage`
 * names the operations a breaking change would break and passes one that nothing (but the
 * playground) used.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildSchema, getNamedType, isCompositeType, isNonNullType, parse, print, visit, type DocumentNode } from 'graphql';
import * as consoleDocuments from '../../web/src/gql/graphql';
import { coordinatesOf } from '../../src/graphql/operation-usage';
import { addOperationCounts, MAX_OPERATIONS } from '../../src/data/graphql-usage';
import { operatorCtx } from '../../src/services/context';
import { createUser } from '../../src/services/users';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { ROOT } from '../support/paths';

const TSX = path.join(ROOT, 'node_modules/.bin/tsx');
const CHECK = path.join(ROOT, 'scripts/schema-check.ts');
const SDL = fs.readFileSync(path.join(ROOT, 'schema.graphql'), 'utf8');

let app: TestApp;
let admin: TestUser;
let member: TestUser;
let dir: string;

const PROJECTS = consoleDocuments.ProjectsDocument.toString();

/** Query fields no document of the console touches: what only the playground asks below. */
function fieldTheConsoleNeverUses(): string {
  const schema = buildSchema(SDL);
  const used = new Set<string>();
  for (const value of Object.values(consoleDocuments)) {
    if (value && typeof value === 'object' && 'toString' in value && /^\s*(query|mutation|fragment)\b/.test(String(value))) {
      for (const c of coordinatesOf(schema, parse(String(value)))) used.add(c);
    }
  }
  // A field with no required argument that returns objects (so `{ field { __typename } }` runs).
  const candidates = Object.values(schema.getQueryType()!.getFields()).filter(
    (f) => !used.has(`Query.${f.name}`) && f.args.every((a) => !isNonNullType(a.type) || a.defaultValue !== undefined) && isCompositeType(getNamedType(f.type)),
  );
  if (!candidates.length) throw new Error('every query field is used by the console');
  return candidates[0].name;
}

const run = (token: string, query: string, client?: string) =>
  app.request('POST', '/api/v1/graphql', { token, body: { query }, headers: client ? { 'graphql-client-name': client } : {} });

/** schema.graphql without one field of a type. */
function without(sdl: string, type: string, field: string): string {
  const doc: DocumentNode = visit(parse(sdl), {
    ObjectTypeDefinition(node) {
      if (node.name.value !== type) return undefined;
      return { ...node, fields: node.fields?.filter((f) => f.name.value !== field) };
    },
  });
  return print(doc);
}

const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe', encoding: 'utf8' }).trim();
const check = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(TSX, [CHECK, '--base', 'HEAD', ...args], { cwd: dir, encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } });
/** The same, without blocking this process (the service it asks runs here). */
const checkAsync = (args: string[], env: Record<string, string>) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(TSX, [CHECK, '--base', 'HEAD', ...args], { cwd: dir, timeout: 60_000, env: { ...process.env, ...env } }, (err, stdout, stderr) =>
      resolve({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    );
  });

let PLAYGROUND_ONLY: string;

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GRAPHQL_PER_HOUR: '100000' } });
  const email = `usage-admin-${process.pid}-${Date.now()}@example.test`;
  const a = await createUser(operatorCtx(app.deps.db), email, 'Admin', { role: 'admin' });
  admin = { id: a.id, email, ...(await app.newKey(a)) };
  member = await app.createUser('member');
  PLAYGROUND_ONLY = fieldTheConsoleNeverUses();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'schema-usage-'));
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 't@example.test');
  git('config', 'user.name', 't');
  fs.writeFileSync(path.join(dir, 'schema.graphql'), SDL);
  git('add', '.');
  git('commit', '-q', '-m', 'schema');
});
afterAll(async () => {
  await app?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('counting', () => {
  beforeAll(async () => {
    for (let i = 0; i < 2; i++) expect((await run(member.token, PROJECTS, 'session-archive-console')).status).toBe(200);
    expect((await run(member.token, `{ ${PLAYGROUND_ONLY} { __typename } }`, 'session-archive-playground')).status).toBe(200);
    expect((await run(member.token, 'query Mine { projects { id name } }')).status).toBe(200);
  });

  test('an administrator reads each operation per client with its count, last run and coordinates', async () => {
    const r = await app.request('GET', '/api/v1/graphql/usage?days=30', { token: admin.token });
    expect(r.status).toBe(200);
    const ops = r.body.operations as Array<{ id: string; name: string | null; client: string; count: number; lastSeen: string; coordinates: string[] }>;
    const consoleOp = ops.find((o) => o.client === 'session-archive-console');
    expect(consoleOp).toMatchObject({ name: 'Projects', count: 2 });
    expect(consoleOp!.id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(consoleOp!.coordinates).toEqual(expect.arrayContaining(['Query.projects', 'Project.lastActivity', 'Project.viewerCan', 'ProjectPermissions.edit']));
    expect(Date.parse(consoleOp!.lastSeen)).toBeGreaterThan(Date.now() - 600_000);
    expect(ops.find((o) => o.client === 'session-archive-playground')?.coordinates).toEqual([`Query.${PLAYGROUND_ONLY}`]);
    // No client name: `unknown`.
    expect(ops.find((o) => o.name === 'Mine')).toMatchObject({ client: 'unknown', count: 1, coordinates: ['Project.id', 'Project.name', 'Query.projects'] });
  });

  test('the same text from two clients is one operation id, counted per client', async () => {
    expect((await run(member.token, PROJECTS, 'another-app')).status).toBe(200);
    const ops = (await app.request('GET', '/api/v1/graphql/usage', { token: admin.token })).body.operations as Array<{ id: string; client: string }>;
    const ids = new Set(ops.filter((o) => o.client === 'session-archive-console' || o.client === 'another-app').map((o) => o.id));
    expect(ids.size).toBe(1);
  });

  test('a member may not read usage (403); days out of range or not a number → 400; no key → 401', async () => {
    const forbidden = await app.request('GET', '/api/v1/graphql/usage', { token: member.token });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.errors[0]).toMatchObject({ message: 'Only instance administrators can read GraphQL usage', extensions: { code: 'FORBIDDEN' } });
    for (const days of ['0', '366', 'abc', '1.5']) {
      const bad = await app.request('GET', `/api/v1/graphql/usage?days=${days}`, { token: admin.token });
      expect([days, bad.status]).toEqual([days, 400]);
      expect(bad.body.errors[0].message).toBe('days must be an integer from 1 to 365');
    }
    expect((await app.request('GET', '/api/v1/graphql/usage')).status).toBe(401);
  });
});

test('at most 10,000 operations are kept: the least recently seen go first, with their days', async () => {
  const t0 = Date.now() - 86_400_000;
  const day = new Date(t0).toISOString().slice(0, 10);
  const count = async () => Number((await app.deps.db.reads.query<{ n: unknown }>('SELECT COUNT(*) AS n FROM graphql_operations'))[0].n);
  const before = await count();
  const op = (i: number) => ({
    id: `sha256:cap-${String(i).padStart(6, '0')}`,
    name: `Cap${i}`,
    coordinates: '[]',
    client: 'cap',
    day,
    count: 1,
    lastSeen: new Date(t0 + i),
  });
  for (let start = 0; start < MAX_OPERATIONS + 10; start += 1000) {
    await addOperationCounts(
      app.deps.db.writes,
      Array.from({ length: Math.min(1000, MAX_OPERATIONS + 10 - start) }, (_v, k) => op(start + k)),
    );
  }
  expect(await count()).toBe(MAX_OPERATIONS);
  const oldest = await app.deps.db.reads.query<{ id: string }>("SELECT id FROM graphql_operations WHERE id LIKE 'sha256:cap-%' ORDER BY lastSeen LIMIT 1");
  // The operations counted above were seen after all of these, so the oldest of these went.
  expect(oldest[0].id).toBe(`sha256:cap-${String(before + 10).padStart(6, '0')}`);
  const orphans = await app.deps.db.reads.query<{ n: unknown }>(
    'SELECT COUNT(*) AS n FROM graphql_operation_days d LEFT JOIN graphql_operations o ON o.id = d.operationId WHERE o.id IS NULL',
  );
  expect(Number(orphans[0].n)).toBe(0);
  await app.deps.db.writes.execute("DELETE FROM graphql_operations WHERE id LIKE 'sha256:cap-%'");
});

describe('schema:check --usage', () => {
  let usageFile: string;
  beforeAll(async () => {
    const r = await app.request('GET', '/api/v1/graphql/usage?days=30', { token: admin.token });
    usageFile = path.join(dir, 'usage.json');
    fs.writeFileSync(usageFile, r.text);
  });
  afterEach(() => git('checkout', '-q', '--', 'schema.graphql'));

  test("removing a field the console uses fails and names the console's operation and client", () => {
    fs.writeFileSync(path.join(dir, 'schema.graphql'), without(SDL, 'Project', 'lastActivity'));
    const r = check(['--usage', usageFile]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/✖ Field 'lastActivity' was removed from object type 'Project'/);
    expect(r.stdout).toMatch(/used by Projects \(sha256:[0-9a-f]{12}…\) from session-archive-console: 2 runs/);
  });

  test('removing a field only the playground used passes, saying that nothing used it', () => {
    fs.writeFileSync(path.join(dir, 'schema.graphql'), without(SDL, 'Query', PLAYGROUND_ONLY));
    const r = check(['--usage', usageFile]);
    expect(r.stdout).toMatch(new RegExp(`✖ Field '${PLAYGROUND_ONLY}' was removed from object type 'Query'`));
    expect(r.stdout).toMatch(/no operation used it in the usage window \(the playground aside\): passes/);
    expect(r.status).toBe(0);
    // Without usage, the same change is breaking.
    expect(check([]).status).toBe(1);
  });

  test('usage fetched from the service with SCHEMA_USAGE_TOKEN works the same; without a token the check says what is missing', async () => {
    fs.writeFileSync(path.join(dir, 'schema.graphql'), without(SDL, 'Project', 'lastActivity'));
    const url = `${app.url}/api/v1/graphql/usage?days=30`;
    const r = await checkAsync(['--usage', url], { SCHEMA_USAGE_TOKEN: admin.token });
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/used by Projects .* from session-archive-console/);
    const anonymous = await checkAsync(['--usage', url], { SCHEMA_USAGE_TOKEN: '' });
    expect(anonymous.status).toBe(2);
    expect(anonymous.stderr).toMatch(/answered 401 \(set SCHEMA_USAGE_TOKEN to an administrator's key\)/);
  });
});
