/**
 * `npm run schema:check [-- --base <git ref>] [--write-changelog]` (docs/graphql.md): compares
 * schema.graphql in the working tree with the same file at a base commit, prints every change
 * classified breaking / dangerous / safe (GraphQL Inspector), and exits 1 when a change is
 * breaking.
 *
 * Deprecations carry their removal date: every `@deprecated(reason: …)` says `Removal on
 * YYYY-MM-DD.`, and removing a deprecated field, argument, input field or enum value before that
 * date (or one whose deprecation named no date) is breaking.
 *
 * `--usage <file or URL>` reads what the service counted (`GET /api/v1/graphql/usage?days=30`,
 * saved to a file or fetched with `SCHEMA_USAGE_TOKEN` as the bearer key): each breaking change
 * then names the operations and clients that used its coordinate in that window, and a breaking
 * change that no operation used (the playground's aside) passes, saying so.
 *
 * The changelog (scripts/schema-changelog.ts): `--write-changelog` writes schema.changelog.json
 * from the history; without it, a committed schema.changelog.json that is not what the history
 * makes fails the check (exit 1), so the commit that changes the schema carries its entry.
 *
 * Default base: on `main` (or a detached HEAD, as in CI's fresh clone) the previous commit,
 * `HEAD~1`; on any other branch the commit it forked from main (`git merge-base HEAD main`), so a
 * branch is judged by what it changes. The removal of a field or enum value that was already
 * deprecated is reported as dangerous, not breaking: deprecate first, remove later.
 *
 * A base that is not in the local history (a shallow clone) is fetched one commit deeper when
 * possible; when it still cannot be found, or the base has no schema.graphql, there is nothing to
 * compare with: the script says so and exits 0.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { buildSchema, isEnumType, isInputObjectType, isInterfaceType, isObjectType, type GraphQLSchema } from 'graphql';
import { CriticalityLevel, diff, DiffRule, type Change } from '@graphql-inspector/core';
import { buildChangelog, CHANGELOG_FILE, changelogText } from './schema-changelog';

/** The repository: the current directory (npm runs scripts from the package root). */
const ROOT = process.cwd();
const FILE = 'schema.graphql';

function git(args: string[]): string | null {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

function parseArgs(argv: string[]): { base: string | null; writeChangelog: boolean; usage: string | null } {
  let base: string | null = null;
  let writeChangelog = false;
  let usage: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--base') {
      base = argv[++i] ?? null;
      if (!base) fail('--base needs a git ref');
    } else if (a.startsWith('--base=')) base = a.slice('--base='.length);
    else if (a === '--write-changelog') writeChangelog = true;
    else if (a === '--usage') {
      usage = argv[++i] ?? null;
      if (!usage) fail('--usage needs a file or a URL');
    } else if (a.startsWith('--usage=')) usage = a.slice('--usage='.length);
    else fail(`unknown argument: ${a} (usage: npm run schema:check [-- --base <git ref>] [--usage <file or URL>] [--write-changelog])`);
  }
  return { base, writeChangelog, usage };
}

function fail(message: string): never {
  console.error(`schema:check: ${message}`);
  process.exit(2);
}

function defaultBase(): string {
  const branch = git(['rev-parse', '--abbrev-ref', 'HEAD']);
  if (branch && branch !== 'HEAD' && branch !== 'main') {
    const fork = git(['merge-base', 'HEAD', 'main']);
    if (fork) return fork;
  }
  return 'HEAD~1';
}

/** The commit `ref` names, deepening a shallow clone once when it is missing. */
function resolveCommit(ref: string): string | null {
  const verify = () => git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  let sha = verify();
  if (!sha && git(['rev-parse', '--is-shallow-repository']) === 'true') {
    git(['fetch', '--quiet', '--deepen=1']);
    sha = verify();
  }
  return sha;
}

const ORDER: [CriticalityLevel, string, string][] = [
  [CriticalityLevel.Breaking, 'breaking', '✖'],
  [CriticalityLevel.Dangerous, 'dangerous', '⚠'],
  [CriticalityLevel.NonBreaking, 'safe', '✔'],
];

/** One operation and client as `GET /api/v1/graphql/usage` lists them. */
interface UsedOperation {
  id: string;
  name: string | null;
  client: string;
  count: number;
  lastSeen: string;
  coordinates: string[];
}

/** The playground's operations are someone trying the API, not an app that would break. */
const PLAYGROUND_CLIENT = 'session-archive-playground';

function getUrl(url: string, token: string | undefined): Promise<string> {
  const u = new URL(url);
  const get = u.protocol === 'https:' ? https.get : http.get;
  return new Promise((resolve, reject) => {
    const req = get(u, { headers: { Accept: 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode === 200) resolve(text);
        else reject(new Error(`${url} answered ${res.statusCode}${token ? '' : " (set SCHEMA_USAGE_TOKEN to an administrator's key)"}`));
      });
    });
    req.on('error', reject);
  });
}

async function loadUsage(where: string): Promise<UsedOperation[]> {
  const text = /^https?:\/\//.test(where) ? await getUrl(where, process.env.SCHEMA_USAGE_TOKEN) : fs.readFileSync(where, 'utf8');
  const parsed = JSON.parse(text) as { operations?: UsedOperation[] };
  if (!Array.isArray(parsed.operations)) throw new Error(`${where} holds no operations list`);
  return parsed.operations;
}

/** The operations (the playground's aside) that touched a coordinate or anything under it. */
const usersOf = (ops: readonly UsedOperation[], coordinate: string) =>
  ops.filter((o) => o.client !== PLAYGROUND_CLIENT && o.coordinates.some((c) => c === coordinate || c.startsWith(`${coordinate}.`)));

const REMOVAL = /Removal on (\d{4}-\d{2}-\d{2})\./;

/** Every deprecated coordinate of a schema with its reason (fields, arguments, input fields, enum values). */
function deprecations(schema: GraphQLSchema): Map<string, string> {
  const out = new Map<string, string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const f of Object.values(type.getFields())) {
        if (f.deprecationReason != null) out.set(`${type.name}.${f.name}`, f.deprecationReason);
        for (const a of f.args) if (a.deprecationReason != null) out.set(`${type.name}.${f.name}.${a.name}`, a.deprecationReason);
      }
    } else if (isInputObjectType(type)) {
      for (const f of Object.values(type.getFields())) if (f.deprecationReason != null) out.set(`${type.name}.${f.name}`, f.deprecationReason);
    } else if (isEnumType(type)) {
      for (const v of type.getValues()) if (v.deprecationReason != null) out.set(`${type.name}.${v.name}`, v.deprecationReason);
    }
  }
  return out;
}

/** The deprecation rules: every deprecation names its removal date; nothing deprecated goes before it. */
function deprecationProblems(oldSchema: GraphQLSchema | null, current: GraphQLSchema, today: string): string[] {
  const problems: string[] = [];
  const now = deprecations(current);
  for (const [coordinate, reason] of now) {
    if (!REMOVAL.test(reason)) problems.push(`${coordinate} is deprecated without a removal date: end its reason with "Removal on YYYY-MM-DD."`);
  }
  if (!oldSchema) return problems;
  const exists = new Set<string>();
  for (const type of Object.values(current.getTypeMap())) {
    exists.add(type.name);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const f of Object.values(type.getFields())) {
        exists.add(`${type.name}.${f.name}`);
        for (const a of f.args) exists.add(`${type.name}.${f.name}.${a.name}`);
      }
    } else if (isInputObjectType(type)) for (const f of Object.values(type.getFields())) exists.add(`${type.name}.${f.name}`);
    else if (isEnumType(type)) for (const v of type.getValues()) exists.add(`${type.name}.${v.name}`);
  }
  for (const [coordinate, reason] of deprecations(oldSchema)) {
    if (exists.has(coordinate)) continue;
    const date = REMOVAL.exec(reason)?.[1];
    if (!date) problems.push(`${coordinate} was removed, but its deprecation named no removal date`);
    else if (date > today) problems.push(`${coordinate} was removed before its announced removal date (${date})`);
  }
  return problems;
}

/** Compares the committed changelog with the one the history makes; writes it instead with --write-changelog. */
async function checkChangelog(write: boolean): Promise<boolean> {
  const file = path.join(ROOT, CHANGELOG_FILE);
  if (!write && !fs.existsSync(file)) return true;
  const made = await buildChangelog(ROOT);
  if (!made) {
    console.log(`schema:check: the history of ${FILE} is not whole here (shallow clone?); ${CHANGELOG_FILE} not checked.`);
    return !write;
  }
  const text = changelogText(made);
  if (write) {
    fs.writeFileSync(file, text);
    console.log(`schema:check: wrote ${CHANGELOG_FILE} (${made.entries.length} versions).`);
    return true;
  }
  if (fs.readFileSync(file, 'utf8') === text) return true;
  console.log(`\n${CHANGELOG_FILE} is not what the history of ${FILE} makes: run \`npm run schema:check -- --write-changelog\` and commit it with the schema.`);
  return false;
}

async function main(): Promise<void> {
  const { base: requested, writeChangelog, usage: usageFrom } = parseArgs(process.argv.slice(2));
  const usage = usageFrom ? await loadUsage(usageFrom) : null;
  if (!(await checkChangelog(writeChangelog))) process.exitCode = 1;
  const today = new Date().toISOString().slice(0, 10);
  const base = requested ?? defaultBase();
  const sha = resolveCommit(base);
  if (!sha && requested) fail(`unknown git ref: ${requested}`);
  const current = buildSchema(fs.readFileSync(path.join(ROOT, FILE), 'utf8'));
  if (!sha) {
    console.log(`schema:check: base "${base}" is not in this clone's history (shallow or new repository); nothing to compare.`);
    reportDeprecations(deprecationProblems(null, current, today));
    return;
  }
  const old = git(['show', `${sha}:${FILE}`]);
  if (old === null) {
    console.log(`schema:check: ${FILE} does not exist at ${base} (${sha.slice(0, 12)}); nothing to compare.`);
    reportDeprecations(deprecationProblems(null, current, today));
    return;
  }
  const oldSchema = buildSchema(old);
  const changes = await diff(oldSchema, current, [DiffRule.suppressRemovalOfDeprecatedField]);

  console.log(`schema:check: ${FILE} against ${base} (${sha.slice(0, 12)}): ${changes.length} change(s)`);
  const counts: string[] = [];
  /** Breaking changes that no operation in the usage window used. */
  const unused = new Set<Change>();
  for (const [level, label, mark] of ORDER) {
    const group = changes.filter((c: Change) => c.criticality.level === level);
    counts.push(`${group.length} ${label}`);
    if (!group.length) continue;
    console.log(`\n${label.toUpperCase()} (${group.length})`);
    for (const c of group) {
      console.log(`  ${mark} ${c.message}${c.path ? `  [${c.path}]` : ''}`);
      if (c.criticality.reason) console.log(`      ${c.criticality.reason}`);
      if (usage && level === CriticalityLevel.Breaking) {
        const users = c.path ? usersOf(usage, c.path) : usage;
        if (users.length) {
          for (const u of users) console.log(`      used by ${u.name ?? u.id} (${u.id.slice(0, 19)}…) from ${u.client}: ${u.count} runs, last ${u.lastSeen}`);
        } else {
          console.log('      no operation used it in the usage window (the playground aside): passes');
          unused.add(c);
        }
      }
    }
  }
  console.log(`\n${counts.join(', ')}`);
  if (changes.some((c) => c.criticality.level === CriticalityLevel.Breaking && !unused.has(c))) {
    console.log('Breaking changes found: deprecate first (@deprecated(reason: "… Removal on YYYY-MM-DD.")), remove on or after that date.');
    process.exitCode = 1;
  }
  reportDeprecations(deprecationProblems(oldSchema, current, today));
}

function reportDeprecations(problems: string[]): void {
  if (!problems.length) return;
  console.log(`\nDEPRECATIONS (${problems.length})`);
  for (const p of problems) console.log(`  ✖ ${p}`);
  process.exitCode = 1;
}

main().catch((err) => fail(err instanceof Error ? err.message : String(err)));
