/** The merge of the recent and main indexes' pages of one search (adapter.ts). */
/**
 * The hits at positions [offset, offset + limit) of both indexes' results merged by score (ties:
 * recent first), given the recent index's first hits and the main index's hits from position
 * `mainFrom` on. When mainFrom > 0, every recent hit was fetched (mainFrom = offset - their
 * number), and those scoring above the first main hit given are ranked before the page.
 */
export function mergeByScore<H extends { _rankingScore?: number }>(recent: H[], main: H[], mainFrom: number, offset: number, limit: number): H[] {
  const score = (h: H) => Number(h._rankingScore ?? 0);
  const merged: H[] = [];
  let i = 0;
  let j = 0;
  while (i < recent.length || j < main.length) {
    if (j >= main.length || (i < recent.length && score(recent[i]) >= score(main[j]))) merged.push(recent[i++]);
    else merged.push(main[j++]);
  }
  if (mainFrom === 0) return merged.slice(offset, offset + limit);
  // Position of main[0] in the whole ranking: mainFrom main hits and the recent hits above it.
  const before = main.length ? recent.filter((h) => score(h) >= score(main[0])).length : recent.length;
  const start = merged.indexOf(main[0]);
  if (start < 0) return [];
  const first = mainFrom + before;
  return merged.slice(start + (offset - first), start + (offset - first) + limit);
}
