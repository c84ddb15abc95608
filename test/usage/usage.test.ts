/**
 * What a session cost: token usage read from raw agent logs (test/fixtures/usage, written for the
 * project in the shapes Claude Code, Codex CLI and Gemini CLI write) and priced. The Claude Code
 * totals are compared with those of ccusage, run on a copy of the same files.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import { loadPriceTable, readUsage, SHIPPED_PRICES, UsageReader, type SessionUsage } from '../../src/domain/usage';
import { spawnTracked, trackDir, untrackDir } from '../support/processes';
import { ROOT, FIXTURES as FIXTURE_ROOT } from '../support/paths';

const FIXTURES = path.join(FIXTURE_ROOT, 'usage');
const CLAUDE_FILES = ['-work-demo/3f1c2a9e-6b1d-4c55-9a57-1d2e8f0a4b61.jsonl', '-work-other/9a0b7c6d-2e3f-4a1b-8c9d-0e1f2a3b4c5d.jsonl'].map((f) =>
  path.join(FIXTURES, 'claude/projects', f),
);
const CODEX_FILE = path.join(FIXTURES, 'codex/rollout-2026-11-20T11-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl');
const GEMINI_FILE = path.join(FIXTURES, 'gemini/session-2026-11-20T12-00-5c1d9e7a.json');

// Every folder made here is removed after the file's tests, passed or failed.
const made: string[] = [];
const tmp = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-usage-'));
  trackDir(dir);
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) {
    fs.rmSync(dir, { recursive: true, force: true });
    untrackDir(dir);
  }
});

const fileUsage = (file: string, prices = SHIPPED_PRICES) => readUsage(fs.createReadStream(file, { highWaterMark: 97 }), prices);
const model = (u: SessionUsage | null, name: string) => u?.byModel.find((m) => m.model === name);

interface CcusageModel {
  modelName: string;
  inputTokens: number;
  outputTokens: number;
  cacheCreationTokens: number;
  cacheReadTokens: number;
  cost: number;
}

/** ccusage's per-model totals of every session under `configDir`/projects, priced from its offline table. */
function ccusage(configDir: string): Promise<Map<string, CcusageModel>> {
  const cli = path.resolve(ROOT, 'node_modules/ccusage/dist/main.node.js');
  const child = spawnTracked(process.execPath, [cli, 'claude', 'session', '--json', '--offline', '--mode', 'calculate'], {
    cwd: configDir,
    env: { PATH: process.env.PATH, HOME: configDir, CLAUDE_CONFIG_DIR: configDir, TZ: 'UTC', NO_COLOR: '1', CCUSAGE_JSONL_WORKER_THREADS: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`ccusage exited ${code}: ${err}`));
      const byModel = new Map<string, CcusageModel>();
      try {
        for (const session of (JSON.parse(out) as { sessions: { modelBreakdowns: CcusageModel[] }[] }).sessions) {
          for (const m of session.modelBreakdowns) {
            const into = byModel.get(m.modelName) ?? { ...m, inputTokens: 0, outputTokens: 0, cacheCreationTokens: 0, cacheReadTokens: 0, cost: 0 };
            into.inputTokens += m.inputTokens;
            into.outputTokens += m.outputTokens;
            into.cacheCreationTokens += m.cacheCreationTokens;
            into.cacheReadTokens += m.cacheReadTokens;
            into.cost += m.cost;
            byModel.set(m.modelName, into);
          }
        }
      } catch (e) {
        return reject(new Error(`ccusage's output is not as expected (${String(e)}): ${out.slice(0, 500)}`));
      }
      resolve(byModel);
    });
  });
}

const within1Percent = (ours: number, theirs: number) => expect(Math.abs(ours - theirs)).toBeLessThanOrEqual(theirs * 0.01);

test("Claude Code logs: per-model totals match ccusage's within 1% (repeated messages once, sidechains, cache tokens, fast mode)", async () => {
  const dir = tmp();
  fs.cpSync(path.join(FIXTURES, 'claude'), dir, { recursive: true });
  const theirs = await ccusage(dir);

  const ours = new Map<string, { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number; cost: number }>();
  for (const file of CLAUDE_FILES) {
    for (const m of (await fileUsage(file))!.byModel) {
      const into = ours.get(m.model) ?? { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost: 0 };
      into.inputTokens += m.inputTokens;
      into.outputTokens += m.outputTokens;
      into.cacheReadTokens += m.cacheReadTokens;
      into.cacheWriteTokens += m.cacheWriteTokens;
      into.cost += m.costUsd!;
      ours.set(m.model, into);
    }
  }
  expect([...ours.keys()].sort()).toEqual([...theirs.keys()].sort());
  expect(ours.size).toBe(4);
  for (const [name, t] of theirs) {
    const o = ours.get(name)!;
    within1Percent(o.inputTokens, t.inputTokens);
    within1Percent(o.outputTokens, t.outputTokens);
    within1Percent(o.cacheReadTokens, t.cacheReadTokens);
    within1Percent(o.cacheWriteTokens, t.cacheCreationTokens);
    expect(t.cost).toBeGreaterThan(0);
    within1Percent(o.cost, t.cost);
  }
});

test('Claude Code: a message written twice counts once (the larger copy), sidechains count, broken and synthetic lines do not', async () => {
  const usage = await fileUsage(CLAUDE_FILES[0]);
  expect(usage!.byModel.map((m) => m.model)).toEqual(['claude-haiku-4-5-20251001', 'claude-opus-4-1-20250805', 'claude-sonnet-4-5-20250929']);
  expect(model(usage, 'claude-sonnet-4-5-20250929')).toMatchObject({ inputTokens: 13, outputTokens: 1537, cacheWriteTokens: 8668, cacheReadTokens: 48288 });
  // The sub-agent's sidechain, its first message written twice.
  expect(model(usage, 'claude-haiku-4-5-20251001')).toMatchObject({ inputTokens: 1240, outputTokens: 245, cacheWriteTokens: 900, cacheReadTokens: 8100 });
  // A message without a request id, written twice, is keyed by its id alone.
  expect(model(usage, 'claude-opus-4-1-20250805')).toMatchObject({ inputTokens: 22, outputTokens: 2140, cacheWriteTokens: 30800, cacheReadTokens: 30000 });
  // Sonnet 4.5 at $3 / $15 / $0.30 / $3.75 per million tokens.
  expect(model(usage, 'claude-sonnet-4-5-20250929')!.costUsd).toBeCloseTo((13 * 3 + 1537 * 15 + 48288 * 0.3 + 8668 * 3.75) / 1e6, 12);
  const all = usage!.byModel;
  expect(usage!.totalTokens).toBe(all.reduce((s, m) => s + m.inputTokens + m.outputTokens + m.cacheReadTokens + m.cacheWriteTokens, 0));
  expect(usage!.costUsd).toBeCloseTo(
    all.reduce((s, m) => s + m.costUsd!, 0),
    12,
  );
});

/** A model's totals without cache writes (Codex and Gemini report none), its cost to 12 places. */
const row = (model: string, inputTokens: number, outputTokens: number, cacheReadTokens: number, cost: number) => ({
  model,
  inputTokens,
  outputTokens,
  cacheReadTokens,
  cacheWriteTokens: 0,
  costUsd: expect.closeTo(cost, 12),
});

test.each([
  [
    'Codex CLI: token_count totals by difference (an event written twice adds nothing), model from turn_context, cached input as cache reads',
    CODEX_FILE,
    [row('gpt-5', 4000, 300, 6000, 0.00875), row('gpt-5-codex', 8000, 1300, 12000, 0.0245)],
    31600,
    0.03325,
  ],
  [
    'Gemini CLI: a session file (messages with tokens), a message written twice counted once, thoughts as output, tool prompts as input',
    GEMINI_FILE,
    [row('gemini-2.5-flash', 4000, 150, 0, 0.001575), row('gemini-2.5-pro', 8200, 950, 19000, 0.022125)],
    32300,
    0.0237,
  ],
])('%s', async (_name, file, byModel, totalTokens, cost) => {
  expect(await fileUsage(file)).toEqual({ byModel, totalTokens, costUsd: expect.closeTo(cost, 12) });
});

test('Codex CLI: without running totals the last turn counts; a restarted total counts its last turn', async () => {
  const tc = (total: number[] | null, last: number[]) => {
    const u = (t: number[]) => ({ input_tokens: t[0], cached_input_tokens: t[1], output_tokens: t[2] });
    return JSON.stringify({
      type: 'event_msg',
      payload: { type: 'token_count', info: { ...(total && { total_token_usage: u(total) }), last_token_usage: u(last) } },
    });
  };
  const ctx = JSON.stringify({ type: 'turn_context', payload: { model: 'gpt-5-mini' } });
  const log = [ctx, tc(null, [100, 0, 10]), tc(null, [200, 50, 20]), tc([1000, 100, 100], [300, 0, 30]), tc([400, 0, 40], [400, 0, 40])].join('\n');
  expect((await readUsage(log, SHIPPED_PRICES))!.byModel).toEqual([
    {
      model: 'gpt-5-mini',
      inputTokens: 100 + 150 + 900 + 400,
      outputTokens: 10 + 20 + 100 + 40,
      cacheReadTokens: 50 + 100,
      cacheWriteTokens: 0,
      costUsd: expect.any(Number),
    },
  ]);
});

test("Gemini API responses' usageMetadata, one per line", async () => {
  const line = (id: string) =>
    JSON.stringify({
      id,
      modelVersion: 'gemini-2.5-flash-lite',
      usageMetadata: { promptTokenCount: 1000, candidatesTokenCount: 80, cachedContentTokenCount: 600, thoughtsTokenCount: 20 },
    });
  expect((await readUsage(`${line('r1')}\n${line('r1')}\n${line('r2')}\n`, SHIPPED_PRICES))!.byModel).toEqual([
    {
      model: 'gemini-2.5-flash-lite',
      inputTokens: 800,
      outputTokens: 200,
      cacheReadTokens: 1200,
      cacheWriteTokens: 0,
      costUsd: expect.closeTo((800 * 0.1 + 200 * 0.4 + 1200 * 0.01) / 1e6, 12),
    },
  ]);
});

const claudeLine = (id: string, model: string, input: number, output: number) =>
  JSON.stringify({ type: 'assistant', requestId: `req_${id}`, message: { id, model, usage: { input_tokens: input, output_tokens: output } } });

test('an unknown model counts its tokens with cost null, and the total cost is then null; dated and decorated names take their price', async () => {
  const log = [claudeLine('m1', 'claude-sonnet-4-5-20990101', 1000, 100), claudeLine('m2', 'mystery-model-7', 500, 50), claudeLine('m3', 'claude', 10, 1)].join(
    '\n',
  );
  const usage = await readUsage(log, SHIPPED_PRICES);
  expect(usage).toEqual({
    byModel: [
      { model: 'claude', inputTokens: 10, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: null },
      {
        model: 'claude-sonnet-4-5-20990101',
        inputTokens: 1000,
        outputTokens: 100,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        costUsd: expect.closeTo(0.0045, 12),
      },
      { model: 'mystery-model-7', inputTokens: 500, outputTokens: 50, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: null },
    ],
    totalTokens: 1661,
    costUsd: null,
  });
  const bedrock = await readUsage(claudeLine('m4', 'anthropic.claude-haiku-4-5-20251001-v1:0', 1_000_000, 0), SHIPPED_PRICES);
  expect(bedrock!.costUsd).toBeCloseTo(1, 12);
  // A fast variant without a fast price in the table has none.
  const fast = JSON.stringify({
    requestId: 'r',
    message: { id: 'f', model: 'claude-sonnet-4-5', usage: { input_tokens: 5, output_tokens: 5, speed: 'fast' } },
  });
  expect((await readUsage(fast, SHIPPED_PRICES))!.byModel[0]).toMatchObject({ model: 'claude-sonnet-4-5-fast', costUsd: null });
});

test('PRICES_FILE replaces the shipped table, is checked at start, and an invalid one stops the start', async () => {
  const dir = tmp();
  const file = path.join(dir, 'prices.json');
  fs.writeFileSync(
    file,
    JSON.stringify({ source: 'test', date: '2026-11-28', models: { 'mystery-model': { input: 2, output: 4, cacheRead: 1, cacheWrite: 3 } } }),
  );
  const env = { DATA_DIR: dir, JWT_SECRET: 'a-secret-of-sufficient-length' };
  const config = loadConfig({ ...env, PRICES_FILE: file });
  expect(config.prices.models.size).toBe(1);
  expect(loadConfig(env).prices).toBe(SHIPPED_PRICES);

  const usage = await readUsage(
    [claudeLine('a', 'mystery-model-7', 1_000_000, 1_000_000), claudeLine('b', 'claude-sonnet-4-5', 10, 10)].join('\n'),
    config.prices,
  );
  expect(usage!.byModel).toEqual([
    { model: 'claude-sonnet-4-5', inputTokens: 10, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: null },
    { model: 'mystery-model-7', inputTokens: 1_000_000, outputTokens: 1_000_000, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 6 },
  ]);

  const problems = (extra: Record<string, string>) => {
    try {
      loadConfig({ ...env, ...extra });
    } catch (e) {
      return (e as ConfigError).problems.join('\n');
    }
    throw new Error('expected a ConfigError');
  };
  expect(problems({ PRICES_FILE: path.join(dir, 'missing.json') })).toMatch(/PRICES_FILE cannot be read \(ENOENT\)/);
  fs.writeFileSync(file, '{"models": ');
  expect(problems({ PRICES_FILE: file })).toMatch(/PRICES_FILE is not JSON/);
  fs.writeFileSync(file, JSON.stringify({ models: { m: { input: -1, output: 1, cacheRead: 1, cacheWrite: 1 } } }));
  expect(problems({ PRICES_FILE: file })).toMatch(/PRICES_FILE models\.m\.input/);
  expect(() => loadPriceTable(file)).toThrow(/models\.m\.input/);
});

test('the shipped table states its source and date', () => {
  expect(SHIPPED_PRICES.source).toMatch(/Anthropic.*OpenAI.*Google/);
  expect(SHIPPED_PRICES.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  expect(SHIPPED_PRICES.models.get('claude-opus-4-1')).toEqual({ input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 });
});

test('hostile input: nothing thrown, bad lines skipped, an overlong line skipped without being held, chunks split anywhere', async () => {
  const good = claudeLine('ok', 'claude-haiku-4-5', 100, 10);
  const hostile = [
    '{"message":{"usage":{"input_tokens":"100","output_tokens":1}}}',
    '{"message":{"usage":{"input_tokens":-5,"output_tokens":1}}}',
    '{"message":{"usage":{"input_tokens":1e300,"output_tokens":1}}}',
    '{"message":{"usage":null}}',
    '[1,2,"usage"]',
    '{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":{}}}}}',
    '{"messages":[null,1,{"type":"gemini","tokens":{"input":"x"}}]}',
    '{"__proto__":{"usage":1},"message":{"usage":{"input_tokens":1,"output_tokens":1},"model":"' + 'm'.repeat(500) + '"}}',
    '"usage"',
    '\u0000\uffff"usage"',
  ];
  expect(await readUsage(hostile.join('\n'), SHIPPED_PRICES)).toEqual({
    byModel: [{ model: 'unknown', inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: null }],
    totalTokens: 2,
    costUsd: null,
  });

  const reader = new UsageReader(SHIPPED_PRICES, { maxLineChars: 1000 });
  const long = `{"message":{"usage":{"input_tokens":5,"output_tokens":5},"model":"claude-haiku-4-5","pad":"${'x'.repeat(5000)}"}}`;
  const text = `${good}\n${long}\n${good.replace('"ok"', '"ok2"')}`;
  // Bytes in chunks of 7: lines and UTF-8 sequences split across chunks.
  const bytes = Buffer.from(text.replace('ok2', 'ok2-é'));
  for (let i = 0; i < bytes.length; i += 7) reader.push(bytes.subarray(i, i + 7));
  expect(reader.result()!.byModel).toEqual([
    { model: 'claude-haiku-4-5', inputTokens: 200, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: expect.closeTo(0.0003, 12) },
  ]);

  expect(await readUsage('', SHIPPED_PRICES)).toBeNull();
  expect(await readUsage('{"type":"user","message":{"content":"hi"}}\n', SHIPPED_PRICES)).toBeNull();
  const many = Array.from({ length: 5 }, (_, i) => claudeLine(`x${i}`, `model-${i}`, 1, 1)).join('\n');
  const capped = await readUsage(many, SHIPPED_PRICES, { maxModels: 2 });
  expect(capped!.byModel.map((m) => [m.model, m.inputTokens])).toEqual([
    ['(other models)', 3],
    ['model-0', 1],
    ['model-1', 1],
  ]);
});
