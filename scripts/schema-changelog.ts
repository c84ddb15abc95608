/**
 * The GraphQL schema's changelog (docs/graphql.md), made from the git history of schema.graphql:
 * one entry per version, newest first. Version 1 is the first committed schema; each later commit
 * that changes what the schema says (GraphQL Inspector finds at least one change) is the next
 * version, dated by its author date (UTC). A working tree whose schema.graphql differs from HEAD's
 * adds the next version, dated today, so the commit that changes the schema carries its own entry.
 *
 * `npm run schema:check -- --write-changelog` writes it to schema.changelog.json; `schema:check`
 * fails when the committed file is not what the history makes; the service serves the file at
 * GET /api/v1/graphql/changelog.json.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildSchema } from 'graphql';
import { CriticalityLevel, diff, DiffRule, type Change } from '@graphql-inspector/core';

export const SCHEMA_FILE = 'schema.graphql';
export const CHANGELOG_FILE = 'schema.changelog.json';

export type ChangeLevel = 'BREAKING' | 'DANGEROUS' | 'SAFE';

export interface ChangelogChange {
  level: ChangeLevel;
  /** The schema coordinate the change is about (`Type.field`, `Type.field.argument`, `Enum.VALUE`; `schema` for the root operation types). */
  coordinate: string;
  message: string;
}

export interface ChangelogEntry {
  version: number;
  /** YYYY-MM-DD (UTC). */
  date: string;
  changes: ChangelogChange[];
}

export interface Changelog {
  entries: ChangelogEntry[];
}

const LEVELS: Record<CriticalityLevel, ChangeLevel> = {
  [CriticalityLevel.Breaking]: 'BREAKING',
  [CriticalityLevel.Dangerous]: 'DANGEROUS',
  [CriticalityLevel.NonBreaking]: 'SAFE',
};

/**
 * Inspector's changes between two SDL texts, as changelog lines (breaking first, then dangerous,
 * then safe). The description of something added in the same version is part of its addition, not
 * a line of its own.
 */
export async function changesBetween(oldSdl: string, newSdl: string): Promise<ChangelogChange[]> {
  const all = await diff(buildSchema(oldSdl), buildSchema(newSdl), [DiffRule.suppressRemovalOfDeprecatedField]);
  const added = new Set(all.filter((c) => String(c.type).endsWith('_ADDED') && !String(c.type).includes('DESCRIPTION')).map((c) => c.path));
  const isNew = (p: string | undefined) => !!p && (added.has(p) || added.has(p.split('.').slice(0, -1).join('.')));
  const changes = all.filter((c) => !(String(c.type).includes('DESCRIPTION') && isNew(c.path)));
  const order: ChangeLevel[] = ['BREAKING', 'DANGEROUS', 'SAFE'];
  return changes
    .map((c: Change) => ({ level: LEVELS[c.criticality.level], coordinate: c.path || 'schema', message: c.message }))
    .sort((a, b) => order.indexOf(a.level) - order.indexOf(b.level));
}

const utcDate = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString().slice(0, 10);

/**
 * The changelog of the repository at `root`, or null when its history cannot be read whole (not a
 * git repository, or a shallow clone whose first commits are missing).
 */
export async function buildChangelog(root: string, today = new Date()): Promise<Changelog | null> {
  const git = (args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 << 20 });
  let log: string;
  try {
    if (git(['rev-parse', '--is-shallow-repository']).trim() === 'true') return null;
    log = git(['log', '--reverse', '--format=%H %at', '--', SCHEMA_FILE]);
  } catch {
    return null;
  }
  const versions: Array<{ sdl: string; date: string; changes: ChangelogChange[] }> = [];
  for (const line of log.split('\n').filter(Boolean)) {
    const [sha, at] = line.split(' ');
    let sdl: string;
    try {
      sdl = git(['show', `${sha}:${SCHEMA_FILE}`]);
    } catch {
      continue; // the commit deleted the file
    }
    const prev = versions.at(-1);
    const changes = prev ? await changesBetween(prev.sdl, sdl) : [];
    if (prev && changes.length === 0) continue;
    versions.push({ sdl, date: utcDate(Number(at)), changes });
  }
  const file = path.join(root, SCHEMA_FILE);
  if (fs.existsSync(file)) {
    const current = fs.readFileSync(file, 'utf8');
    const prev = versions.at(-1);
    const changes = prev ? await changesBetween(prev.sdl, current) : [];
    if (!prev || changes.length) versions.push({ sdl: current, date: today.toISOString().slice(0, 10), changes });
  }
  return { entries: versions.map((v, i) => ({ version: i + 1, date: v.date, changes: v.changes })).reverse() };
}

/** The file's text: stable, two-space JSON with a final newline. */
export const changelogText = (c: Changelog): string => `${JSON.stringify(c, null, 2)}\n`;
