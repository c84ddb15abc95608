/** Realistic-looking session markdown of a given size: headings, prose, code blocks. */
const WORDS =
  'the a function returns value error test build request session project query index cache retry timeout schema migration token deploy branch commit review refactor parse render handler worker queue database transaction'.split(
    ' ',
  );

function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

export function markdownOfSize(bytes: number, seed = 1): string {
  const r = rng(seed);
  const word = () => WORDS[Math.floor(r() * WORDS.length)];
  const parts: string[] = [];
  let size = 0;
  let turn = 0;
  while (size < bytes) {
    const block =
      turn % 3 === 0
        ? `## ${turn % 2 ? 'User' : 'Assistant'}\n\n`
        : turn % 3 === 1
          ? `${Array.from({ length: 40 }, word).join(' ')}.\n\n`
          : '```ts\n' + `const ${word()} = await ${word()}(${word()});\nif (!${word()}) throw new Error('${word()}');\n` + '```\n\n';
    parts.push(block);
    size += Buffer.byteLength(block);
    turn++;
  }
  return parts.join('').slice(0, bytes);
}
