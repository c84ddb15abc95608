/**
 * The manifest of an export archive is written and checked a slice of files at a time (so that
 * the manifest of a large archive never holds the event loop): the bytes are exactly those of the
 * canonical JSON, and the checks give the messages a whole-manifest check gives.
 */
import crypto from 'node:crypto';
import { canonicalJson, MANIFEST_SLICE, manifestJson, parseManifest, type Manifest } from '../../src/domain/archive';

function manifestOf(n: number): Manifest {
  const files = Array.from({ length: n }, (_, i) => {
    const id = crypto.randomUUID();
    return { path: `projects/p-${i % 7}/sessions/${id}/markdown.md`, size: i * 1000, sha256: crypto.createHash('sha256').update(id).digest('hex') };
  });
  return { format: 'session-archive-export', version: 1, projects: 7, sessions: n, files };
}

test.each([0, 1, MANIFEST_SLICE, MANIFEST_SLICE * 2 + 3])('%i files: the same bytes as canonical JSON, and they parse back', async (n) => {
  const m = manifestOf(n);
  const bytes = await manifestJson(m);
  expect(bytes.equals(canonicalJson(m))).toBe(true);
  expect(await parseManifest(bytes)).toEqual(m);
});

test('the event loop gets turns while a large manifest is written and checked', async () => {
  const m = manifestOf(MANIFEST_SLICE * 5);
  let turns = 0;
  const ticker = setInterval(() => turns++, 0);
  try {
    const before = turns;
    const bytes = await manifestJson(m);
    expect(turns).toBeGreaterThan(before);
    const mid = turns;
    await parseManifest(bytes);
    expect(turns).toBeGreaterThan(mid);
  } finally {
    clearInterval(ticker);
  }
});

test('a bad entry anywhere is named by its index; a path outside projects/ or listed twice is refused', async () => {
  const m = manifestOf(MANIFEST_SLICE + 10);
  const at = MANIFEST_SLICE + 5;
  const bad = (mutate: (files: Array<Record<string, unknown>>) => void) => {
    const files = m.files.map((f) => ({ ...f })) as Array<Record<string, unknown>>;
    mutate(files);
    return parseManifest(Buffer.from(JSON.stringify({ ...m, files })));
  };
  await expect(bad((f) => (f[at].sha256 = 'xyz'))).rejects.toThrow(new RegExp(`^manifest.json is not a valid manifest: files\\.${at}\\.sha256: `));
  await expect(bad((f) => (f[at].size = -1))).rejects.toThrow(new RegExp(`files\\.${at}\\.size`));
  await expect(bad((f) => (f[at].path = '../etc/passwd'))).rejects.toThrow('Invalid path in manifest: "../etc/passwd"');
  await expect(bad((f) => (f[at].path = f[3].path))).rejects.toThrow(`Path listed twice in manifest: ${m.files[3].path}`);
  await expect(parseManifest(Buffer.from(JSON.stringify({ ...m, files: 'nope' })))).rejects.toThrow(/^manifest.json is not a valid manifest: files: /);
  await expect(parseManifest(Buffer.from(JSON.stringify({ ...m, format: 'zip' })))).rejects.toThrow('Not a session archive export: format is "zip"');
});
