/**
 * What an import keeps of its manifest (src/services/import-manifest.ts, ListedFiles): every
 * listed file found again by its path with its size and sha256, each path listed once, each
 * session's listed files and whether it was handled, and the sessions never handled named in the
 * manifest's order.
 */
import crypto from 'node:crypto';
import { DONE, fileBit, ListedFiles } from '../../src/services/import-manifest';

const digest = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

test('files are found by path with their size and digest; a path is listed once; arrival is marked', () => {
  const list = new ListedFiles();
  const a = '0f8fad5b-d9cb-469f-a165-70867728950e';
  const b = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
  expect(list.add('projects/p1/project.json', 10, digest('p1'))).toBe(true);
  expect(list.add(`projects/p1/sessions/${a}/markdown.md`, 5, digest('a-md'))).toBe(true);
  expect(list.add(`projects/p1/sessions/${a}/session.json`, 7, digest('a-json'))).toBe(true);
  expect(list.add(`projects/P1/sessions/${a}/markdown.md`, 6, digest('A-md'))).toBe(true);
  expect(list.add(`projects/p1/sessions/${a}/markdown.md`, 5, digest('again'))).toBe(false);
  expect(list.add('projects/p1/project.json', 1, digest('again'))).toBe(false);
  expect(list.count).toBe(4);
  expect(list.sessions).toBe(2);

  expect(list.arrive(`projects/p1/sessions/${a}/session.json`)).toEqual({ size: 7, sha256: digest('a-json'), again: false });
  expect(list.arrive(`projects/p1/sessions/${a}/session.json`)).toEqual({ size: 7, sha256: digest('a-json'), again: true });
  // Project ids are case-sensitive: P1 is another project.
  expect(list.arrive(`projects/P1/sessions/${a}/markdown.md`)).toEqual({ size: 6, sha256: digest('A-md'), again: false });
  expect(list.arrive('projects/p1/project.json')).toEqual({ size: 10, sha256: digest('p1'), again: false });
  expect(list.arrive(`projects/p1/sessions/${a}/raw`)).toBeNull();
  expect(list.arrive(`projects/p1/sessions/${b}/markdown.md`)).toBeNull();
  expect(list.arrive('projects/p2/project.json')).toBeNull();
  expect(list.arrive('not/a/path')).toBeNull();

  expect(list.sessionState('p1', a)).toBe(fileBit('markdown.md') | fileBit('session.json'));
  expect(list.sessionState('p1', b)).toBe(0);
  expect(list.done('p1', a)).toBe(fileBit('markdown.md') | fileBit('session.json'));
  expect(list.sessionState('p1', a) & DONE).toBe(DONE);
  expect([...list.unhandled()]).toEqual([`projects/P1/sessions/${a}/`]);
});

test('many sessions: each found again, the unhandled ones named in order', () => {
  const list = new ListedFiles();
  const ids = Array.from({ length: 5000 }, () => crypto.randomUUID());
  ids.forEach((id, i) => {
    expect(list.add(`projects/many-${i % 7}/sessions/${id}/raw`, i, digest(id))).toBe(true);
  });
  ids.forEach((id, i) => {
    expect(list.arrive(`projects/many-${i % 7}/sessions/${id}/raw`)).toEqual({ size: i, sha256: digest(id), again: false });
    if (i % 2 === 0) list.done(`many-${i % 7}`, id);
  });
  expect([...list.unhandled()]).toEqual(ids.flatMap((id, i) => (i % 2 ? [`projects/many-${i % 7}/sessions/${id}/`] : [])));
});
