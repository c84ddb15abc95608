/** Pure parts of search: chunking, snippets, filter expressions, worker ordering, settings diff. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { boundedDistance, matchingFragments, matchRanges, parseQuery, snippetSource, withinOneEdit } from '../../src/search/engine/highlight';
import { documentIdOf, fitsWhole, termsOf, toDocuments } from '../../src/domain/search-documents';
import { WHOLE_MAX } from '../../src/domain/index-work';
import { CHUNK_MAX, chunkMarkdown, fragmentsOf } from '../../src/domain/markdown-chunks';
import { exchangeEntriesOf, exchangeNumberAt, outlineFor, outlineOf } from '../../src/domain/document-outline';
import { installBinary, spawnExecutable } from '../../src/search/embedded/engine-host';
import { keyOf } from '../../src/domain/search-documents';
import { meiliString, ownedProjectFilter, ownedSessionsFilter, searchFilter } from '../../src/search/engine/filter';
import { INDEX_SETTINGS, settingsDiff } from '../../src/search/engine/index-settings';
import { engineText } from '../../src/domain/engine-text';
import { buildSnippet, escapeHtml, MARKERS } from '../../src/search/engine/snippet';
import { deferredRows } from '../../src/search/sync/claims';
import { passable } from '../../src/search/sync/standby';
import { mergeByScore } from '../../src/search/engine/merge-by-score';

describe('chunkMarkdown', () => {
  test('chunks concatenate back to the markdown and stay under the maximum', () => {
    const md =
      '# Title\n\nIntro.\n\n' +
      Array.from({ length: 40 }, (_, i) => `## User\n\nQuestion ${i}?\n\n## Assistant\n\n${'Answer text here. '.repeat(20 + (i % 7) * 30)}\n\n`).join('') +
      '```\n# not a heading inside a fence\n```\n' +
      'x'.repeat(5000) + // one long line without spaces
      '\n' +
      '😀'.repeat(3000); // surrogate pairs
    const chunks = chunkMarkdown(md);
    expect(chunks.join('')).toBe(md);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(CHUNK_MAX);
    for (const c of chunks) expect(c).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
    expect(chunks.length).toBeGreaterThan(20);
  });

  test('prefers exchange boundaries: a chunk starts at a heading when one is near', () => {
    const md = Array.from({ length: 10 }, (_, i) => `## Exchange ${i}\n\n${'word '.repeat(200)}\n\n`).join('');
    const chunks = chunkMarkdown(md);
    expect(chunks.every((c) => c.startsWith('## Exchange'))).toBe(true);
  });

  test('a heading or fence may be indented by up to 3 spaces, not 4', () => {
    const md =
      `## A\n\n${'a '.repeat(700)}\n   ## B three spaces\n\n${'b '.repeat(300)}\n    ## C four spaces\n${'c '.repeat(200)}\n` +
      `   \`\`\`\n## D inside an indented fence\n${'d '.repeat(50)}\n   \`\`\`\n`;
    const chunks = chunkMarkdown(md);
    expect(chunks.join('')).toBe(md);
    expect(chunks.map((c) => c.split('\n')[0])).toEqual(['## A', '   ## B three spaces']);
    expect(chunks[1]).toContain('    ## C four spaces');
    expect(chunks[1]).toContain('## D inside an indented fence');
  });

  test('a heading inside a code fence is not a boundary', () => {
    const md = `## A\n\n${'a '.repeat(700)}\n\`\`\`\n## not a boundary\n${'b '.repeat(100)}\n\`\`\`\n`;
    const chunks = chunkMarkdown(md);
    expect(chunks.some((c) => c.startsWith('## not a boundary'))).toBe(false);
  });
});

describe('toDocuments', () => {
  const row = {
    projectId: 'p.1',
    id: '0e6a2d7c-1111-4222-8333-444455556666',
    userId: 'u1',
    name: 'N',
    createdAt: new Date('2024-01-15T10:30:00.000Z'),
    clientName: 'Claude-Code',
    agentName: 'AgentX',
    deviceId: 'Dev',
    metadataJson: JSON.stringify({ llmModels: ['m'], tags: ['t'], gitBranches: ['main'], extra: { title: 'x' } }),
    hasGitBranches: 1,
    contentDigest: 'd1',
  };

  const large = (parts: number, tail = '') => Array.from({ length: parts }, (_, i) => `## Part ${i}\n\n${'text of the part '.repeat(100)}\n\n`).join('') + tail;

  test('a small session is one document holding the whole markdown and the fields filters need', () => {
    const md = `# a\n\n${'x '.repeat(600)}\n\n# b\n\n${'y '.repeat(600)}`;
    const docs = toDocuments(row, md, 5);
    expect(docs).toHaveLength(1);
    expect(docs[0]).toMatchObject({
      chunk: 0,
      chunks: 0,
      content: md,
      sessionKey: 'p.1/0e6a2d7c-1111-4222-8333-444455556666',
      userId: 'u1',
      clientName: 'claude-code',
      agentName: 'agentx',
      deviceId: 'Dev',
      tags: ['t'],
      llmModels: ['m'],
      gitBranches: ['main'],
      createdAt: Date.parse('2024-01-15T10:30:00.000Z'),
      hasGitBranches: true,
      syncedAt: 5,
    });
    expect(docs[0].id).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  test('a large session is a word-list document plus one document per non-blank fragment', () => {
    const md = large(60, 'Zeta zeta ZETA omega');
    expect(md.length).toBeGreaterThan(WHOLE_MAX);
    const [session, ...fragments] = toDocuments(row, md, 5);
    expect(session).toMatchObject({ chunk: 0, chunks: fragments.length, content: '', tags: ['t'], userId: 'u1' });
    // Every distinct word once, lower-cased, in order of first appearance, each apart from the
    // next (a hard separator: the engine records no word pairs across it).
    expect(session.terms!.split(';')).toEqual(
      'part 0 text of the 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 zeta omega'.split(
        ' ',
      ),
    );
    expect(fragments.map((d) => d.chunk)).toEqual(fragments.map((_, i) => i + 1));
    expect(fragments.map((d) => d.content).join('')).toBe(md);
    expect(new Set([session, ...fragments].map((d) => d.id)).size).toBe(fragments.length + 1);
    for (const f of fragments) expect(f).toMatchObject({ chunks: 0, userId: 'u1', tags: ['t'] });
  });

  test('text too dense in words and separators for one document is split even when short', () => {
    const dense = 'a.'.repeat(20_000);
    expect(dense.length).toBeLessThan(WHOLE_MAX);
    expect(fitsWhole(dense)).toBe(false);
    expect(toDocuments(row, dense, 1).length).toBeGreaterThan(1);
  });

  test('the word list stops at what its attributes hold; each attribute stays under the engine limit', () => {
    const words = Array.from({ length: 130_000 }, (_, i) => `w${i}`).join(' ');
    const terms = termsOf(words);
    expect(Object.keys(terms)).toEqual(['terms', 'terms2', 'terms3', 'terms4']);
    for (const v of Object.values(terms)) {
      // Words and separators (`;` keeps two entries apart, a space does not).
      const tokens = v.split(/ |(;)/).filter(Boolean);
      const entries = tokens.filter((w) => w !== ';');
      expect(entries).toHaveLength(30_000);
      // As many apart as fit: words and 8 positions per separator within the engine's 65,535.
      expect(entries.length + 8 * (tokens.length - entries.length)).toBeLessThanOrEqual(65_000);
    }
    expect(terms.terms4!.endsWith('w119999')).toBe(true);
  });

  test('blank markdown still gives one document (name and tags stay searchable)', () => {
    expect(toDocuments(row, '  \n\n ', 1)).toHaveLength(1);
  });

  test('fragment hashes change with the fragment or the session fields, not with appended content', () => {
    const md = large(60);
    const before = toDocuments(row, md, 1);
    const grown = toDocuments(row, md + 'more words\n', 2);
    // Only the last fragment took the appended text (and the word list its new word).
    expect(grown.length).toBe(before.length);
    expect(grown.slice(1, -1).map((d) => d.hash)).toEqual(before.slice(1, -1).map((d) => d.hash));
    expect(grown[grown.length - 1].hash).not.toBe(before[before.length - 1].hash);
    expect(grown[0].hash).not.toBe(before[0].hash);
    // Appending words the session already has leaves its word list alone.
    expect(toDocuments(row, md + 'text part', 3)[0].hash).toBe(before[0].hash);
    const renamed = toDocuments({ ...row, name: 'Other' }, md, 1);
    for (const [i, d] of renamed.entries()) expect(d.hash).not.toBe(before[i].hash);
    // A small session's one document changes with any change of the text.
    expect(toDocuments(row, 'short', 1)[0].hash).not.toBe(toDocuments(row, 'short!', 1)[0].hash);
  });

  test('document ids are distinct across sessions and projects', () => {
    expect(documentIdOf('a', 'b-c', 1)).not.toBe(documentIdOf('a-b', 'c', 1));
  });

  test('a session indexed whole stores its outline, the same for the same text', () => {
    const [doc] = toDocuments(row, '_**User**_\n\nhello\n', 1);
    expect(JSON.parse(doc.outline!)).toEqual(outlineOf('_**User**_\n\nhello\n'));
    expect(toDocuments(row, '_**User**_\n\nhello\n', 2)[0].hash).toBe(doc.hash);
  });

  test('a document holds its name, tags and text as the engine holds text; its digests are of the labels as written', () => {
    const [doc] = toDocuments({ ...row, name: 'Panel <Dialog>', metadataJson: JSON.stringify({ tags: ['<jsx>'] }) }, '# Hi\n\n<b>bold</b>\n', 0);
    expect(doc.name).toBe('Panel ‹Dialog›');
    expect(doc.tags).toEqual(['‹jsx›']);
    expect(doc.content).toBe('# Hi\n\n‹b›bold‹/b›\n');
    expect(doc.tagDigests).toEqual([keyOf('<jsx>')]);
  });
});

describe('buildSnippet', () => {
  const { pre, post, crop } = MARKERS;

  test('escapes the text and turns only the markers into <mark>', () => {
    expect(buildSnippet(`a <b>&"' ${pre}x<y${post} z`)).toBe('a &lt;b&gt;&amp;&quot;&#39; <mark>x&lt;y</mark> z');
  });

  test('crop markers become ellipses', () => {
    expect(buildSnippet(`${crop}middle ${pre}hit${post} text${crop}`)).toBe('…middle <mark>hit</mark> text…');
  });

  test('at most 240 characters around the first match', () => {
    const before = 'before '.repeat(100);
    const after = ' after'.repeat(100);
    const s = buildSnippet(`${before}${pre}needle${post}${after}`);
    const text = s.replace(/<\/?mark>/g, '');
    expect([...text].length).toBeLessThanOrEqual(240);
    expect(s).toContain('<mark>needle</mark>');
    expect(s.startsWith('…')).toBe(true);
    expect(s.endsWith('…')).toBe(true);
    expect((before + 'needle' + after).includes(text.slice(1, -1))).toBe(true);
  });

  test('counts code points, not UTF-16 units', () => {
    const s = buildSnippet(`${'😀'.repeat(300)}${pre}x${post}`);
    expect([...s.replace(/<\/?mark>/g, '')].length).toBeLessThanOrEqual(240);
    expect(s).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });

  test('escapeHtml', () => {
    expect(escapeHtml(`<&>"'`)).toBe('&lt;&amp;&gt;&quot;&#39;');
  });
});

describe('search filter expressions', () => {
  test('string values are quoted and escaped', () => {
    expect(meiliString('a"b\\c')).toBe('"a\\"b\\\\c"');
  });

  test('always scoped to the user; every field translated', () => {
    const f = searchFilter('u"1', {
      projectIds: ['p1'],
      llmModels: ['m'],
      tags: ['t'],
      gitBranches: ['b'],
      clientNames: ['c'],
      agentNames: ['a'],
      deviceIds: ['d'],
      createdFrom: new Date(1000),
      createdTo: new Date(2000),
      hasGitBranches: false,
    });
    expect(f).toBe(
      `userId = "u\\"1" AND projectDigest IN ["${keyOf('p1')}"] AND` +
        ` modelDigests IN ["${keyOf('m')}"] AND tagDigests IN ["${keyOf('t')}"] AND branchDigests IN ["${keyOf('b')}"] AND ` +
        `clientName IN ["c"] AND agentName IN ["a"] AND deviceDigest IN ["${keyOf('d')}"] AND createdAt >= 1000 AND createdAt <= 2000 AND hasGitBranches = false`,
    );
  });

  test('index work names the owner and exact, case-free keys', () => {
    expect(keyOf('ACME-APP')).not.toBe(keyOf('acme-app'));
    expect(keyOf('ACME-APP')).toMatch(/^[0-9a-f]{20}$/);
    expect(ownedProjectFilter('u1', 'ACME-APP')).toBe(`userId = "u1" AND projectDigest = "${keyOf('ACME-APP')}"`);
    const f = ownedSessionsFilter([
      { userId: 'u1', projectId: 'A', sessionId: 's' },
      { userId: 'u2', projectId: 'a', sessionId: 's' },
      { userId: 'u1', projectId: 'B', sessionId: 's' },
    ]);
    expect(f).toBe(`((userId = "u1" AND sessionDigest IN ["${keyOf('A/s')}", "${keyOf('B/s')}"]) OR (userId = "u2" AND sessionDigest IN ["${keyOf('a/s')}"]))`);
  });
});

describe('outbox ordering', () => {
  const row = (id: number, op: 'upsert' | 'delete' | 'delete_project', projectId: string, sessionId: string | null) => ({
    id,
    op,
    userId: 'u',
    projectId,
    sessionId,
    attempts: 0,
  });

  test('a claimed row waits for older unclaimed work on the same session or its project', () => {
    const claimed = [row(5, 'upsert', 'p', 's1'), row(6, 'upsert', 'p', 's2'), row(7, 'upsert', 'q', 's3'), row(8, 'delete_project', 'q', null)];
    const older = [
      { id: 2, op: 'upsert' as const, projectId: 'p', sessionId: 's1' }, // held by another worker
      { id: 3, op: 'upsert' as const, projectId: 'q', sessionId: 's9' },
      ...claimed,
    ];
    expect([...deferredRows(claimed, older)].sort()).toEqual([5, 8]);
  });

  test('an older project deletion holds back every session of the project', () => {
    const claimed = [row(5, 'upsert', 'p', 's1'), row(6, 'upsert', 'r', 's2')];
    expect([...deferredRows(claimed, [{ id: 1, op: 'delete_project', projectId: 'p', sessionId: null }, ...claimed])]).toEqual([5]);
  });

  test('work claimed together is not held back by itself', () => {
    const claimed = [row(1, 'delete_project', 'p', null), row(2, 'upsert', 'p', 's1'), row(3, 'upsert', 'p', 's1')];
    expect(deferredRows(claimed, claimed).size).toBe(0);
  });

  test('a standby cursor passes a hole in the ids only once the row after it is older than the grace', () => {
    const now = new Date('2026-11-29T09:00:00.000Z');
    const at = (id: number, ageMs: number) => ({ id, createdAt: new Date(now.getTime() - ageMs), now });
    const ids = (rows: Array<{ id: number }>) => rows.map((r) => r.id);
    // No hole: every row, however young.
    expect(ids(passable(10, [at(11, 0), at(12, 0), at(13, 0)], 15_000))).toEqual([11, 12, 13]);
    // A hole before a young row: up to the hole (id 14 may still be committed).
    expect(ids(passable(10, [at(11, 0), at(12, 0), at(15, 100)], 15_000))).toEqual([11, 12]);
    expect(ids(passable(10, [at(12, 100)], 15_000))).toEqual([]);
    // A hole before a row older than the grace: passed (a rollback, unused ids).
    expect(ids(passable(10, [at(11, 20_000), at(14, 16_000), at(15, 0), at(17, 1_000)], 15_000))).toEqual([11, 14, 15]);
  });
});

describe('merging the recent and the main index', () => {
  test('any page of the merge is that page of all hits ranked together', () => {
    const random = (seed: number) => () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let seed = 1; seed <= 200; seed++) {
      const r = random(seed);
      // Scores from a few values, so that ties happen (recent first on a tie).
      const hits = (n: number, tier: string) =>
        Array.from({ length: n }, (_, i) => ({ id: `${tier}${i}`, _rankingScore: Math.floor(r() * 5) / 5 })).sort((a, b) => b._rankingScore - a._rankingScore);
      const recent = hits(Math.floor(r() * 6), 'r');
      const main = hits(Math.floor(r() * 12), 'm');
      const everything = [...recent, ...main].sort((a, b) => b._rankingScore - a._rankingScore || (a.id[0] === 'r' ? -1 : 1) - (b.id[0] === 'r' ? -1 : 1));
      const limit = 1 + Math.floor(r() * 4);
      const offset = Math.floor(r() * 16);
      // As the adapter asks: the recent hits up to offset + limit, the main ones from `from`.
      const fetchedRecent = recent.slice(0, offset + limit);
      const from = Math.max(0, offset - fetchedRecent.length);
      const fetchedMain = main.slice(from, offset + limit);
      expect(mergeByScore(fetchedRecent, fetchedMain, from, offset, limit).map((h) => h.id)).toEqual(everything.slice(offset, offset + limit).map((h) => h.id));
    }
  });
});

describe('text as the engine holds it', () => {
  test('angle brackets swapped with separators the engine has, every offset kept, and back exactly', () => {
    const written = 'The <b>word</b> ‹quoted› a -> b, <Dialog/> and plain text.';
    const held = engineText(written);
    expect(held).toBe('The ‹b›word‹/b› <quoted> a -› b, ‹Dialog/› and plain text.');
    expect(held.length).toBe(written.length);
    expect(engineText(held)).toBe(written);
    const plain = 'nothing to swap';
    expect(engineText(plain)).toBe(plain);
  });
});

describe('index settings', () => {
  test('no difference once applied (settings are not re-sent on every start)', () => {
    // As the engine answers: sets in its own order, and more keys.
    const applied = {
      ...INDEX_SETTINGS,
      filterableAttributes: [...INDEX_SETTINGS.filterableAttributes].reverse(),
      separatorTokens: [],
      extra: 1,
    };
    expect(settingsDiff(applied as any)).toEqual({});
    expect(Object.keys(settingsDiff({ ...applied, searchableAttributes: ['*'] } as any))).toEqual(['searchableAttributes']);
  });
});

describe('embedded engine binary', () => {
  test('a binary whose sha256 is not the pinned one is refused', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-bin-'));
    const fake = path.join(dir, 'meilisearch');
    fs.writeFileSync(fake, '#!/bin/sh\necho pwned\n');
    try {
      await expect(installBinary(path.join(dir, 'bin'), fake)).rejects.toThrow(/sha256/);
      expect(fs.existsSync(path.join(dir, 'bin'))).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a binary still open for writing somewhere (ETXTBSY) is run once it is closed', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-spawn-'));
    const bin = path.join(dir, 'engine');
    fs.writeFileSync(bin, '#!/bin/sh\necho ran\n', { mode: 0o755 });
    // Held open for writing, as a child forked while the binary was being copied holds it.
    const fd = fs.openSync(bin, 'r+');
    try {
      setTimeout(() => fs.closeSync(fd), 200);
      const child = await spawnExecutable(bin, [], { stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      child.stdout!.on('data', (c) => (out += c));
      await new Promise((resolve) => child.once('close', resolve));
      expect(out).toBe('ran\n');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('local highlighting of sessions indexed whole', () => {
  const marked = (text: string, query: Parameters<typeof matchRanges>[1]) => matchRanges(text, query).map(([a, b]) => text.slice(a, b));

  test('words case- and accent-insensitively, typos from 5 letters, the last word as a prefix', () => {
    expect(marked('The Café served Postgres; postgras too.', 'cafe postgres')).toEqual(['Café', 'Postgres', 'postgras']);
    // No typo under 5 letters, none on the first letter.
    expect(marked('cat bat', 'cap')).toEqual([]);
    expect(marked('wostgres', 'postgres')).toEqual([]);
    // Prefix only for the last word.
    expect(marked('migration migrate', 'migra')).toEqual(['migration', 'migrate']);
    expect(marked('migration pool', 'migra pool')).toEqual(['pool']);
  });

  test('ASCII text is marked exactly as the general tokenizer would', () => {
    // A non-ASCII character at the end sends the same text down the general path.
    const text =
      'Postgres pool exhausted; the postgras connection (pooling, reconnect) failed at 10:42. ' +
      'Migrations: migrate_users, migration42, MIGRATED. x1 poolside connections connectionless cafe';
    const queries = ['postgres', 'connection migra', 'pol', 'pool', 'migratoin', 'x1 cafe', 'exhausted conection', 'zzz', 'c', 'reconect pooling'];
    for (const q of queries) {
      expect(matchRanges(text, q)).toEqual(matchRanges(`${text} é`, q));
    }
  });

  test('typo checks: the one-edit test and the bounded distance agree with the full edit distance', () => {
    // Edit distance with swaps of neighbours (optimal string alignment), the whole table.
    const distance = (a: string, b: string) => {
      const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
      for (let i = 1; i <= a.length; i++) {
        for (let j = 1; j <= b.length; j++) {
          d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
          if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
      return d[a.length][b.length];
    };
    // Every word of up to 4 letters over a 3-letter alphabet, against every other.
    const words = [''];
    for (let n = 0; n < words.length && words[n].length < 4; n++) for (const c of 'abc') words.push(words[n] + c);
    let mismatches = 0;
    for (const a of words) {
      for (const b of words) {
        const d = distance(a, b);
        if (withinOneEdit(a, b) !== d <= 1) mismatches++;
        // The distance itself when it is at most max; something over max otherwise.
        for (const max of [1, 2]) if (d <= max ? boundedDistance(a, b, max) !== d : boundedDistance(a, b, max) <= max) mismatches++;
      }
    }
    expect(words).toHaveLength(121);
    // Longer words, near and far, with characters whose codes agree modulo 128 ('a', 'á', 'ℓ'... share a count).
    let seed = 11;
    const r = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const letters = 'abá\u2161ce\u00e5';
    const word = (n: number) => Array.from({ length: n }, () => letters[Math.floor(r() * letters.length)]).join('');
    const edited = (w: string) => {
      const i = Math.floor(r() * w.length);
      const op = Math.floor(r() * 4);
      if (op === 0) return w.slice(0, i) + word(1) + w.slice(i + 1);
      if (op === 1) return w.slice(0, i) + word(1) + w.slice(i);
      if (op === 2) return w.slice(0, i) + w.slice(i + 1);
      return w.slice(0, i) + w.slice(i + 1, i + 2) + w.slice(i, i + 1) + w.slice(i + 2);
    };
    for (let n = 0; n < 20_000; n++) {
      const a = word(6 + Math.floor(r() * 8));
      let b = r() < 0.3 ? word(6 + Math.floor(r() * 8)) : a;
      for (let k = Math.floor(r() * 4); k > 0; k--) b = edited(b);
      const d = distance(a, b);
      if (d <= 2 ? boundedDistance(a, b, 2) !== d : boundedDistance(a, b, 2) <= 2) mismatches++;
    }
    expect(mismatches).toBe(0);
    // Longer words than the kept table holds at first, and back.
    expect(boundedDistance('abcdefghijklmnopqrstuvwxyz', 'abcdefghijklmnopqrstuvwxzy', 2)).toBe(1);
    expect(boundedDistance('connection', 'conection', 2)).toBe(1);
  });

  test('other forms of the query words are marked: inflections, and identifiers by their parts', () => {
    const terms = parseQuery('retries backoff', ['retri', 'backoff']);
    expect(marked('We retried; retrying helps. Call retryWithBackoff, not retro.', terms)).toEqual(['retried', 'retrying', 'retryWithBackoff']);
    // Without forms, only the words themselves (and their typos and prefixes).
    expect(marked('Retrying helps.', 'retries')).toEqual([]);
  });

  test('quoted phrases mark consecutive words only', () => {
    expect(marked('pool exhausted; exhausted pool', '"pool exhausted"')).toEqual(['pool', 'exhausted']);
    expect(parseQuery('"a b" c')).toEqual({ words: [{ text: 'c', prefix: true }], phrases: [['a', 'b']], forms: new Set() });
    expect(parseQuery('c "a b"').words).toEqual([{ text: 'c', prefix: false }]);
  });

  test('the snippet window goes to the part with the most distinct matched words', () => {
    const text = `alpha ${'filler '.repeat(100)}alpha beta together ${'filler '.repeat(100)}`;
    const snippet = buildSnippet(snippetSource(text, matchRanges(text, 'alpha beta')));
    expect(snippet).toContain('<mark>alpha</mark> <mark>beta</mark> together');
    expect(snippet.startsWith('…')).toBe(true);
    expect(snippet.endsWith('…')).toBe(true);
  });

  test('the snippet window is cut between words: no piece of a word shown or marked at either end', () => {
    // The best window starts at `needle` (it alone holds all three words); 90 characters before
    // it, where the excerpt would begin, falls inside the first `listen`.
    const before = `${'x'.repeat(40)} app.listen(3000) then ${'y'.repeat(73)} `;
    expect(before.length).toBe(137);
    const text = `${before}needle and listen ${'w '.repeat(85)} alpha ${'zz '.repeat(100)} tail`;
    const source = snippetSource(text, matchRanges(text, 'needle listen alpha'));
    const shown = source.split(MARKERS.crop).join('').split(MARKERS.pre).join('').split(MARKERS.post).join('');
    expect(shown).toContain('needle');
    // It begins and ends between words.
    const at = text.indexOf(shown);
    expect(at).toBeGreaterThan(0);
    expect(text[at - 1]).toMatch(/\s/);
    expect(text[at + shown.length] ?? ' ').toMatch(/\s/);
    expect(buildSnippet(source)).not.toMatch(/^…<mark>/);
  });

  test('matching fragments are the ones holding a marked word, numbered like the index', () => {
    const part = (i: number, w: string) => `## Exchange ${i}\n\n${'padding text '.repeat(150)} ${w}\n\n`;
    const text = part(1, 'needle') + part(2, 'nothing') + part(3, 'needle');
    const chunks = (max: number) => matchingFragments(text, outlineOf(text), matchRanges(text, 'needle'), max).map((f) => f.chunk);
    expect(chunks(20)).toEqual([1, 3]);
    expect(chunks(1)).toEqual([1]);
  });

  test('the stored outline finds the fragments and exchanges that cutting and scanning the text find', () => {
    // The reference: the text cut into fragments and scanned for exchanges at every search.
    const reference = (text: string, ranges: Array<[number, number]>, max: number) => {
      const entries = exchangeEntriesOf(text);
      const starts = entries.map((e) => e.start);
      const overlaps = (f: { start: number; content: string }, [a, b]: [number, number]) => a < f.start + f.content.length && b > f.start;
      return fragmentsOf(text)
        .filter((f) => ranges.some((r) => overlaps(f, r)))
        .slice(0, max)
        .map((f) => {
          const at = Math.max(f.start, ranges.find((r) => overlaps(f, r))![0]);
          const n = exchangeNumberAt(starts, f.byteStart + Buffer.byteLength(text.slice(f.start, at), 'utf8'));
          return { chunk: f.chunk, byteStart: f.byteStart, content: f.content, exchange: n, title: entries[n - 1].title };
        });
    };
    let seed = 7;
    const r = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
    const words = ['needle', 'haystack', 'café', 'naïve', '数据库', 'emoji😀', 'connection', 'conection', 'pool', 'ñandú', 'plain'];
    const line = () => Array.from({ length: 3 + Math.floor(r() * 12) }, () => pick(words)).join(' ');
    const texts: string[] = [];
    for (let n = 0; n < 60; n++) {
      let text = r() < 0.5 ? `# ${line()}\n\n${line()}\n\n` : '';
      const turns = Math.floor(r() * 40);
      for (let k = 0; k < turns; k++) {
        text += pick(['_**User**_\n\n', '_**User (2026-01-01)**_\n\n', '_**Agent (model x)**_\n\n', '## Heading\n\n', '---\n\n', '\n\n\n']);
        // A fence holding a user turn: not an exchange.
        if (r() < 0.2) text += '```\n_**User**_\n' + line() + '\n```\n\n';
        for (let p = Math.floor(r() * 8); p > 0; p--) text += `${r() < 0.2 ? '- ' : ''}${line()}\n${r() < 0.5 ? '\n' : ''}`;
      }
      texts.push(text);
    }
    texts.push('', '   \n\n', 'needle', `_**User**_\n\n${'needle '.repeat(2000)}`);
    let compared = 0;
    for (const text of texts) {
      const outline = outlineOf(text);
      // What the engine gives back is what was stored: the outline as JSON.
      const stored = outlineFor(JSON.stringify(outline), text);
      expect(stored).toEqual(outline);
      // The stored one is what is used (not one computed again): titles changed in it come back.
      const retitled = { ...outline, t: outline.t.map((title) => `${title}·`) };
      expect(outlineFor(JSON.stringify(retitled), text)).toEqual(retitled);
      for (const query of ['needle', 'cafe naive', '数据库', 'conection', '"pool needle"', 'emoji', 'zzz']) {
        const ranges = matchRanges(text, query);
        for (const max of [20, 3]) {
          const expected = reference(text, ranges, max);
          expect(matchingFragments(text, stored, ranges, max)).toEqual(expected);
          compared += expected.length;
        }
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });

  test('a document without an outline, or with one not of its text, has its outline computed', () => {
    const text = `_**User**_\n\nfirst question\n\n_**User**_\n\nsecond question about café\n`;
    const outline = outlineOf(text);
    expect(outline.x.length).toBe(2);
    expect(outline.t).toEqual(['first question', 'second question about café']);
    const other = [
      {},
      { ...outline, f: [0, 99999, 0] },
      { ...outline, f: [0, 1] },
      { ...outline, f: [10, 20, 10, 5, 30, 5] },
      { ...outline, f: [0, 10, -1] },
      { ...outline, x: [5] },
      { ...outline, t: [] },
      { ...outline, t: [1, 2] },
    ].map((o) => JSON.stringify(o));
    for (const stored of [undefined, null, 'x', '{', 'null', outline, ...other]) {
      expect(outlineFor(stored, text)).toEqual(outline);
    }
  });
});
