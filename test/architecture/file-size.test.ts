/**
 * No source file over 400 lines in src/ and web/src/ (generated code aside): past that a file holds
 * more than one thing, and is split where its parts meet.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { rel, sourceFiles, SRC } from '../support/sources';

const MAX_LINES = 400;

/** Files allowed past the limit for now, each with the reason. */
const ALLOWED: Record<string, string> = {};

const lineCount = (file: string) => fs.readFileSync(file, 'utf8').replace(/\n$/, '').split('\n').length;

test(`no source file has more than ${MAX_LINES} lines`, () => {
  const files = [...sourceFiles(SRC, ['src/generated']), ...sourceFiles(path.join(ROOT, 'web', 'src'), ['web/src/gql', 'web/src/openapi'])];
  const long = files.filter((f) => !(rel(f) in ALLOWED) && lineCount(f) > MAX_LINES).map((f) => `${rel(f)}: ${lineCount(f)}`);
  expect(long).toEqual([]);
});

test('every file allowed past the limit exists and is past it', () => {
  expect(Object.keys(ALLOWED).filter((f) => !fs.existsSync(path.join(ROOT, f)) || lineCount(path.join(ROOT, f)) <= MAX_LINES)).toEqual([]);
});
