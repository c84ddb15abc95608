/**
 * `npm run schema:check [-- --base <git ref>]` (docs/graphql.md): compares schema.graphql in the
 * working tree with the same file at a base commit, prints every change classified breaking /
 * dangerous / safe (GraphQL Inspector), and exits 1 when a change is breaking.
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
import { buildSchema } from 'graphql';
import { CriticalityLevel, diff, DiffRule, type Change } from '@graphql-inspector/core';

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

function parseArgs(argv: string[]): { base: string | null } {
  let base: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--base') {
      base = argv[++i] ?? null;
      if (!base) fail('--base needs a git ref');
    } else if (a.startsWith('--base=')) base = a.slice('--base='.length);
    else fail(`unknown argument: ${a} (usage: npm run schema:check [-- --base <git ref>])`);
  }
  return { base };
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

async function main(): Promise<void> {
  const { base: requested } = parseArgs(process.argv.slice(2));
  const base = requested ?? defaultBase();
  const sha = resolveCommit(base);
  if (!sha && requested) fail(`unknown git ref: ${requested}`);
  if (!sha) {
    console.log(`schema:check: base "${base}" is not in this clone's history (shallow or new repository); nothing to compare.`);
    return;
  }
  const old = git(['show', `${sha}:${FILE}`]);
  if (old === null) {
    console.log(`schema:check: ${FILE} does not exist at ${base} (${sha.slice(0, 12)}); nothing to compare.`);
    return;
  }
  const current = fs.readFileSync(path.join(ROOT, FILE), 'utf8');
  const changes = await diff(buildSchema(old), buildSchema(current), [DiffRule.suppressRemovalOfDeprecatedField]);

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
    console.log('Breaking changes found: deprecate first (@deprecated(reason: …)), remove in a later release.');
    process.exitCode = 1;
  }
}

main().catch((err) => fail(err instanceof Error ? err.message : String(err)));
