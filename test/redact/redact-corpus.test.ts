/**
 * The redactor on its own (src/redact): the labelled corpus (test/redact/corpus.json, built by
 * scripts/gen-redact-corpus.ts) in markdown, escaped JSON Lines and gzip bodies; masks; hard
 * negatives; hostile inputs that would make a backtracking pattern explode. Timings live in
 * bench/redact.ts, not here.
 */
import { buildCorpus } from '../../scripts/gen-redact-corpus';
import { mask, redact } from '../../src/redact';
import { CONTAINERS, loadCorpus, runIn, score } from '../redact/evaluate';

jest.setTimeout(120_000);

const corpus = loadCorpus();

test('the corpus file is what the generator builds (deterministic), with enough of everything', () => {
  expect(buildCorpus()).toEqual(corpus);
  const formats = new Set(corpus.positives.map((p) => p.format));
  expect(corpus.positives.length).toBeGreaterThanOrEqual(400);
  expect(formats.size).toBeGreaterThanOrEqual(40);
  expect(corpus.negatives.length).toBeGreaterThanOrEqual(400);
  for (const p of corpus.positives) expect(p.text).toContain(p.secret);
});

test('recall ≥ 99% on prefixed formats and ≥ 95% on contextual ones, ≤ 1% false positives, shapes kept', () => {
  const s = score(corpus);
  expect(s.prefixed.found / s.prefixed.total).toBeGreaterThanOrEqual(0.99);
  expect(s.contextual.found / s.contextual.total).toBeGreaterThanOrEqual(0.95);
  expect(s.negatives.flagged / s.negatives.total).toBeLessThanOrEqual(0.01);
  expect(s.shapeBroken).toBe(0);
  // Every format is found at least somewhere.
  for (const [format, f] of s.byFormat) expect([format, f.found > 0]).toEqual([format, true]);
});

test('a mask is [REDACTED:<rule>] padded with * to the same byte length, or only * when shorter', () => {
  expect(mask('jwt', 20)).toBe('[REDACTED:jwt]******');
  expect(mask('github-token', 5)).toBe('*****');
  const text = 'pwd: ünïcödé-pässwörd-123';
  const r = redact(`password = "ünïcödé-pässwörd-123-and-more"`);
  expect(Buffer.byteLength(r.output)).toBe(Buffer.byteLength(`password = "ünïcödé-pässwörd-123-and-more"`));
  expect(r.output).toMatch(/^password = "\[REDACTED:secret-value\]\*+"$/);
  expect(redact(text).output).not.toContain('pässwörd');
});

test('redaction is idempotent and findings never carry a value', () => {
  for (const p of corpus.positives.slice(0, 200)) {
    const once = redact(p.text);
    expect(once.count).toBeGreaterThan(0);
    expect(JSON.stringify(once.findings)).not.toContain(p.secret);
    const twice = redact(once.output);
    expect([p.id, twice.count]).toEqual([p.id, 0]);
  }
});

test('escaped JSON: a secret right after \\n is found, escapes are never split, JSON Lines stay valid', () => {
  const token = corpus.positives.find((p) => p.format === 'github-pat')!.secret;
  const pem = corpus.positives.find((p) => p.format === 'pem-rsa-private-key')!.secret;
  const lines = [
    { content: `line one\n${token}\nline three` },
    { content: `key file:\n${pem}\n` },
    { content: `{"password": "s3cr3t-Pa55word"}` },
    { content: 'export API_TOKEN="abc123def456ghi789"\n' },
  ];
  const raw = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
  const r = redact(Buffer.from(raw));
  expect(r.output.length).toBe(Buffer.byteLength(raw));
  const back = r.output
    .toString('utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).content as string);
  expect(back.join()).not.toContain(token);
  expect(back.join()).not.toContain('MII'.length && pem.split('\n')[1]);
  expect(back.join()).not.toContain('s3cr3t-Pa55word');
  expect(back.join()).not.toContain('abc123def456ghi789');
  expect(r.findings).toMatchObject({ 'github-token': 1, 'private-key': 1, 'secret-value': 2 });
});

test('left alone: UUIDs, SHAs, hashes, ETags, base64 images, public keys, code identifiers, env references', () => {
  const clean = [
    '0e6a2d7c-1111-4222-8333-444455556666',
    'commit 3f786850e387550fdab836ed7e6dc881de23001b',
    'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    'ETag: W/"1c5b0f4c7d2a9e8f6b3a1d0c9e8f7a6b5c4d3e2f"',
    '<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==">',
    'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 ada@host',
    'const apiKey = process.env.STRIPE_API_KEY;',
    'password = os.environ.get("DB_PASSWORD")',
    'function getAccessToken(refreshToken: string): Promise<string>',
    'tokenizer = AutoTokenizer.from_pretrained(model_id)',
  ];
  for (const t of clean) expect([t, redact(t).count]).toEqual([t, 0]);
});

test('every container keeps byte length on hostile and random inputs', () => {
  const inputs = ['', 'a', '\\', '\\\\n', 'password=', 'password="', '://@', ':AA', 'eyJ.eyJ.', '-----BEGIN PRIVATE KEY-----'];
  for (const t of inputs) for (const c of CONTAINERS) expect(runIn(c, t).shapeKept).toBe(true);
});

describe('hostile inputs of 5 MB complete (linear scan; timings of 50 MB in bench/redact.ts)', () => {
  const MB5 = 5 * 1024 * 1024;
  const fill = (unit: string) => unit.repeat(Math.ceil(MB5 / unit.length)).slice(0, MB5);
  const cases: Array<[string, string]> = [
    ['one long token run', fill('A')],
    ['repeated JWT starts', fill('eyJ')],
    ['JWT segments without end', fill('eyJhbGciOiJIUzI1NiJ9.')],
    ['repeated prefixes', fill('ghp_sk-ant-xoxb-AKIA')],
    ['separators after key words', fill('password=key:token=')],
    ['URL schemes', fill('a://')],
    ['userinfo without @', fill('x://user:pass')],
    ['PEM headers without end', fill('-----BEGIN RSA PRIVATE KEY-----\nMIIE')],
    ['escapes', fill('\\n\\"')],
    ['mid-anchors', fill(':AA-usQ~.atlasv1.')],
    ['hex runs', fill('0123456789abcdef')],
    ['Bearer runs', fill('Bearer ')],
  ];
  test.each(cases)('%s', (_name, text) => {
    const r = redact(text);
    expect(Buffer.byteLength(r.output)).toBe(Buffer.byteLength(text));
  });
});
