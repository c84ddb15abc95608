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

function parseArgs(argv: string[]): { base: string | null; writeChangelog: boolean } {
  let base: string | null = null;
  let writeChangelog = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--base') {
      base = argv[++i] ?? null;
      if (!base) fail('--base needs a git ref');
    } else if (a.startsWith('--base=')) base = a.slice('--base='.length);
    else if (a === '--write-changelog') writeChangelog = true;
    else fail(`unknown argument: ${a} (usage: npm run schema:check [-- --base <git ref>] [--write-changelog])`);
  }
  return { base, writeChangelog };
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
  const { base: requested, writeChangelog } = parseArgs(process.argv.slice(2));
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
  for (const [level, label, mark] of ORDER) {
    const group = changes.filter((c: Change) => c.criticality.level === level);
    counts.push(`${group.length} ${label}`);
    if (!group.length) continue;
    console.log(`\n${label.toUpperCase()} (${group.length})`);
    for (const c of group) {
      console.log(`  ${mark} ${c.message}${c.path ? `  [${c.path}]` : ''}`);
      if (c.criticality.reason) console.log(`      ${c.criticality.reason}`);
    }
  }
  console.log(`\n${counts.join(', ')}`);
  if (changes.some((c) => c.criticality.level === CriticalityLevel.Breaking)) {
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
