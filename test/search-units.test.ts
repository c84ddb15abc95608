/** Pure parts of search: chunking, snippets, filter expressions, worker ordering, settings diff. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHUNK_MAX, chunkMarkdown, documentIdOf, toDocuments } from '../src/search/documents';
import { installBinary } from '../src/search/embedded';
import { meiliString, searchFilter } from '../src/search/filter';
import { INDEX_SETTINGS, settingsDiff } from '../src/search/index-settings';
import { buildSnippet, escapeHtml, MARKERS } from '../src/search/snippet';
import { deferredRows } from '../src/search/worker';

describe('chunkMarkdown', () => {
  test('chunks concatenate back to the markdown and stay under the maximum', () => {
    const md =
      '# Title\n\nIntro.\n\n' +
      Array.from({ length: 40 }, (_, i) => `## User\n\nQuestion ${i}?\n\n## Assistant\n\n${'Answer text here. '.repeat(20 + (i % 7) * 30)}\n\n`).join('') +
      '```\n# not a heading inside a fence\n```\n' +
      'x'.repeat(5000) + // one long line without spaces
      '\n' + '😀'.repeat(3000); // surrogate pairs
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
  };

  test('one document per non-blank chunk, with the session fields filters need', () => {
    const docs = toDocuments(row, `# a\n\n${'x '.repeat(600)}\n\n# b\n\n${'y '.repeat(600)}`, 5);
    expect(docs.length).toBe(2);
    expect(docs.map((d) => d.chunk)).toEqual([1, 2]);
    expect(docs[0]).toMatchObject({
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
    expect(new Set(docs.map((d) => d.id)).size).toBe(2);
  });

  test('blank markdown still gives one document (name and tags stay searchable)', () => {
    expect(toDocuments(row, '  \n\n ', 1)).toHaveLength(1);
  });

  test('fragment hashes change with the fragment or the session fields, not with appended content', () => {
    const md = Array.from({ length: 5 }, (_, i) => `## Part ${i}\n\n${'text '.repeat(250)}\n\n`).join('');
    const before = toDocuments(row, md, 1);
    const grown = toDocuments(row, md + '## Part 5\n\nmore\n', 2);
    // Only the last fragment took the appended text.
    expect(grown.length).toBe(before.length);
    expect(grown.slice(0, -1).map((d) => d.hash)).toEqual(before.slice(0, -1).map((d) => d.hash));
    expect(grown[grown.length - 1].hash).not.toBe(before[before.length - 1].hash);
    const renamed = toDocuments({ ...row, name: 'Other' }, md, 1);
    for (const [i, d] of renamed.entries()) expect(d.hash).not.toBe(before[i].hash);
  });

  test('document ids are distinct across sessions and projects', () => {
    expect(documentIdOf('a', 'b-c', 1)).not.toBe(documentIdOf('a-b', 'c', 1));
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
      'userId = "u\\"1" AND projectId IN ["p1"] AND llmModels IN ["m"] AND tags IN ["t"] AND gitBranches IN ["b"] AND ' +
        'clientName IN ["c"] AND agentName IN ["a"] AND deviceId IN ["d"] AND createdAt >= 1000 AND createdAt <= 2000 AND hasGitBranches = false',
    );
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
});

describe('index settings', () => {
  test('no difference once applied (settings are not re-sent on every start)', () => {
    const applied = { ...INDEX_SETTINGS, filterableAttributes: [...INDEX_SETTINGS.filterableAttributes].reverse(), extra: 1 };
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
});
