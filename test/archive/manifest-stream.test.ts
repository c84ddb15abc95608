/** The manifest read as it arrives (src/domain/manifest-stream.ts): any split of the text gives what JSON.parse gives. */
import { manifestParser } from '../../src/domain/manifest-stream';

function parseInPieces(text: string, cuts: number[]): { root: Record<string, unknown>; files: unknown[] } {
  const files: unknown[] = [];
  const p = manifestParser((f, i) => {
    expect(i).toBe(files.length);
    files.push(f);
  });
  let at = 0;
  for (const cut of [...cuts, text.length]) {
    p.write(text.slice(at, cut));
    at = cut;
  }
  return { root: p.end(), files };
}

const doc = {
  files: [
    { path: 'projects/p/project.json', sha256: 'a'.repeat(64), size: 12 },
    { path: 'projects/p/sessions/x/markdown.md', sha256: 'b'.repeat(64), size: 0, extra: [1.5e3, -2, true, false, null, { 'k\\"é': '\u2028 \ud83d\ude80' }] },
  ],
  format: 'session-archive-export',
  projects: 1,
  sessions: -0.25e-2,
  version: 1,
};

test.each([JSON.stringify(doc), JSON.stringify(doc, null, 2), ` \n${JSON.stringify({ version: 1, files: doc.files, format: 'x' })}\n`])(
  'every split of the text gives the same values',
  (text) => {
    const expected = JSON.parse(text) as typeof doc;
    for (let cut = 0; cut <= text.length; cut++) {
      for (const second of [cut, Math.min(text.length, cut + 1), Math.min(text.length, cut + 7)]) {
        const { root, files } = parseInPieces(text, [cut, second]);
        expect(files).toEqual(expected.files);
        expect(root).toEqual({ ...expected, files: [] });
      }
    }
  },
);

test.each([
  ['{"files": [1, 2', /ends early/],
  ['{"files": [1,, 2]}', /unexpected ,/],
  ['{"a": tru}', /unexpected/],
  ['{"a": 01}', /unexpected/],
  ['{"a": "\u0001"}', /bad string/],
  ['{"a": 1} {}', /text after the end/],
  ['[1]', /not an object/],
  [`{"a": [${'1,'.repeat(1001)}1]}`, /too many values/],
  [`{"files": [[${'1,'.repeat(1001)}1]]}`, /too large/],
  [`{"a": ${'['.repeat(40)}`, /nested too deep/],
])('refused: %#', (text, message) => {
  expect(() => parseInPieces(text, [3, 5])).toThrow(message);
});

test('the files array is handed over one element at a time, not kept', () => {
  const n = 5000;
  const text = JSON.stringify({ files: Array.from({ length: n }, (_, i) => ({ path: `p${i}`, size: i })), format: 'f' });
  const { root, files } = parseInPieces(text, [100, 4096, 50_000]);
  expect(files).toHaveLength(n);
  expect(root.files).toEqual([]);
});
