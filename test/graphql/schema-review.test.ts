import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/paths';

/**
 * Schema review tools (docs/graphql.md): `npm run schema:check` in a scratch git repository
 * (changes, removal dates of deprecations, the changelog), and `npm run schema:lint` on the real
 * schema.graphql and on a copy missing descriptions.
 */

const TSX = path.join(ROOT, 'node_modules/.bin/tsx');
const ESLINT = path.join(ROOT, 'node_modules/.bin/eslint');
const CHECK = path.join(ROOT, 'scripts/schema-check.ts');

const BASE_SDL = `"""Q"""
type Query {
  """a"""
  a: String
  """b"""
  b: Int @deprecated(reason: "Use a. Removal on 2020-01-01.")
}
`;

let dir: string;
const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe', encoding: 'utf8' }).trim();
const check = (...args: string[]) => spawnSync(TSX, [CHECK, ...args], { cwd: dir, encoding: 'utf8', timeout: 60_000 });

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'schema-check-'));
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 't@example.test');
  git('config', 'user.name', 't');
  fs.writeFileSync(path.join(dir, 'schema.graphql'), BASE_SDL);
  git('add', '.');
  git('commit', '-q', '-m', 'base');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Commits schema.graphql changed by `edit`. */
function commit(edit: (sdl: string) => string, message: string): void {
  const file = path.join(dir, 'schema.graphql');
  fs.writeFileSync(file, edit(fs.readFileSync(file, 'utf8')));
  git('commit', '-q', '-am', message);
}

test('a safe addition passes and is listed as safe', () => {
  commit((s) => s.replace('  """a"""', '  """c"""\n  c: String\n  """a"""'), 'add c');
  const r = check();
  expect(r.stderr).not.toMatch(/schema:check:/);
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/SAFE \(2\)/); // the field and its description
  expect(r.stdout).toMatch(/Field 'c' was added to object type 'Query'/);
  expect(r.stdout).toMatch(/0 breaking, 0 dangerous, 2 safe/);
});

test('removing a field that was not deprecated is breaking: exit 1', () => {
  const base = git('rev-parse', 'HEAD');
  commit((s) => s.replace('  """a"""\n  a: String\n', ''), 'remove a');
  const r = check('--base', base);
  expect(r.status).toBe(1);
  expect(r.stdout).toMatch(/BREAKING \(1\)/);
  expect(r.stdout).toMatch(/✖ Field 'a' was removed from object type 'Query'/);
  git('reset', '-q', '--hard', base);
});

test('removing a deprecated field is dangerous, not breaking (deprecate first, remove later)', () => {
  const base = git('rev-parse', 'HEAD');
  commit((s) => s.replace('  """b"""\n  b: Int @deprecated(reason: "Use a. Removal on 2020-01-01.")\n', ''), 'remove b');
  const r = check();
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/DANGEROUS \(1\)/);
  expect(r.stdout).toMatch(/Field 'b' .*was removed/);
  git('reset', '-q', '--hard', base);
});

test('removing a deprecated field before its announced removal date is refused, and so is one whose deprecation named no date', () => {
  const base = git('rev-parse', 'HEAD');
  commit((s) => s.replace('  """a"""\n  a: String\n', '  """a"""\n  a: String @deprecated(reason: "Use c. Removal on 2999-01-01.")\n'), 'deprecate a');
  const deprecated = check();
  expect(deprecated.status).toBe(0);
  commit((s) => s.replace('  """a"""\n  a: String @deprecated(reason: "Use c. Removal on 2999-01-01.")\n', ''), 'remove a early');
  const early = check();
  expect(early.status).toBe(1);
  expect(early.stdout).toMatch(/✖ Query\.a was removed before its announced removal date \(2999-01-01\)/);
  git('reset', '-q', '--hard', base);

  commit((s) => s.replace('  """a"""\n  a: String\n', '  """a"""\n  a: String @deprecated(reason: "Use c.")\n'), 'deprecate a without a date');
  const undated = check();
  expect(undated.status).toBe(1);
  expect(undated.stdout).toMatch(/✖ Query\.a is deprecated without a removal date/);
  commit((s) => s.replace('  """a"""\n  a: String @deprecated(reason: "Use c.")\n', ''), 'remove a');
  const removed = check();
  expect(removed.status).toBe(1);
  expect(removed.stdout).toMatch(/✖ Query\.a was removed, but its deprecation named no removal date/);
  git('reset', '-q', '--hard', base);
});

test('the changelog: --write-changelog makes it from the history; a stale committed one fails the check', () => {
  const base = git('rev-parse', 'HEAD');
  const file = path.join(dir, 'schema.changelog.json');
  try {
    const wrote = check('--write-changelog');
    expect(wrote.status).toBe(0);
    const log = JSON.parse(fs.readFileSync(file, 'utf8'));
    // Version 1 is the first schema; version 2 added c (safe); newest first.
    expect(log.entries.map((e: { version: number }) => e.version)).toEqual([2, 1]);
    expect(log.entries[0].changes).toEqual([{ level: 'SAFE', coordinate: 'Query.c', message: "Field 'c' was added to object type 'Query'" }]);
    expect(log.entries[1].changes).toEqual([]);
    git('add', 'schema.changelog.json');
    git('commit', '-q', '-m', 'changelog');
    expect(check().status).toBe(0);

    // A schema change without its entry: the committed changelog is stale.
    commit((s) => s.replace('  """c"""\n  c: String\n', ''), 'remove c');
    const stale = check();
    expect(stale.status).toBe(1);
    expect(stale.stdout).toMatch(/schema\.changelog\.json is not what the history of schema\.graphql makes/);
    expect(check('--write-changelog').status).toBe(1); // still breaking: c was not deprecated
    const newest = JSON.parse(fs.readFileSync(file, 'utf8')).entries[0];
    expect(newest).toMatchObject({ version: 3, changes: [{ level: 'BREAKING', coordinate: 'Query.c' }] });
  } finally {
    git('reset', '-q', '--hard', base);
    fs.rmSync(file, { force: true });
  }
});

test('a base missing from the history: the default is skipped with a note, an explicit one is an error', () => {
  const lone = fs.mkdtempSync(path.join(os.tmpdir(), 'schema-check-lone-'));
  try {
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: lone });
    fs.writeFileSync(path.join(lone, 'schema.graphql'), BASE_SDL);
    const r = spawnSync(TSX, [CHECK], { cwd: lone, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/not in this clone's history/);
  } finally {
    fs.rmSync(lone, { recursive: true, force: true });
  }
  const r = check('--base', 'no-such-ref');
  expect(r.status).toBe(2);
  expect(r.stderr).toMatch(/unknown git ref: no-such-ref/);
});

test('schema:lint passes on schema.graphql and names every missing description and bad name', () => {
  const ok = spawnSync(ESLINT, ['schema.graphql'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  expect(ok.stdout + ok.stderr).toBe('');
  expect(ok.status).toBe(0);

  const sdl = fs.readFileSync(path.join(ROOT, 'schema.graphql'), 'utf8') + '\nextend type Query {\n  new_field(arg: Int): Int\n}\n';
  const bad = spawnSync(ESLINT, ['--stdin', '--stdin-filename', 'schema.graphql'], { cwd: ROOT, input: sdl, encoding: 'utf8', timeout: 120_000 });
  expect(bad.status).toBe(1);
  expect(bad.stdout).toMatch(/Description is required for field "new_field"/);
  expect(bad.stdout).toMatch(/Description is required for input value "arg"/);
  expect(bad.stdout).toMatch(/new_field.*camelCase/);
});
