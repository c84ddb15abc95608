/**
 * redact(Buffer) scans bytes as Latin-1 (src/redact/index.ts): what it finds in UTF-8 text next
 * to non-ASCII characters must be what redact(string) finds, and a mask never splits a UTF-8
 * character (the output stays valid UTF-8 of the same byte length).
 */
import { bytesOf, redact } from '../../src/redact';
import { prepareUpload } from '../../src/domain/upload';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const GH = 'ghp_' + 'R8xk2LmQ9pT4vW7nY3bZ6cF1hJ5sD0gA2eK8';

describe('redact(Buffer) on UTF-8 text with non-ASCII characters', () => {
  const cases: Array<[string, string]> = [
    ['a token after an emoji and accents', `Voilà 🚀 mon jeton: ${GH} — merci`],
    ['a token inside CJK text', `令牌${GH}。`],
    ['a quoted password of non-ASCII characters', `password = "пароль-Zx9!kQ2#vLm8"\n`],
    ['an unquoted password with accents', `DB_PASSWORD=sécrét-Zx9kQ2vLm8wP äöü\n`],
    ['a JSON-escaped token after an escape', `{"text":"naïve\\n${GH}"}`],
  ];
  test.each(cases)('%s: same findings as the string scan, valid UTF-8, same length, secret gone', (_name, text) => {
    const bytes = Buffer.from(text, 'utf8');
    const fromBytes = redact(bytes);
    const fromText = redact(text);
    expect(fromBytes.findings).toEqual(fromText.findings);
    expect(fromBytes.count).toBeGreaterThan(0);
    expect(fromBytes.output.length).toBe(bytes.length);
    const out = strictUtf8.decode(fromBytes.output);
    expect(out).not.toContain(GH);
    expect(out).toBe(fromText.output);
  });

  test('a value cut at its length limit inside a multi-byte character is masked to the whole character', () => {
    // secret-value values are read up to 1000 characters: here the 1000th byte is inside an "é".
    const value = 'Zx9kQ2vLm8wP' + 'a'.repeat(985) + 'ééé';
    const bytes = Buffer.from(`api_key=${value}\n`, 'utf8');
    const r = redact(bytes);
    expect(r.output.length).toBe(bytes.length);
    expect(() => strictUtf8.decode(r.output)).not.toThrow();
    expect(r.output.toString('utf8')).not.toContain('Zx9kQ2vLm8wP');
  });

  test('nothing found: the very same buffer comes back', () => {
    const bytes = Buffer.from('Grüße, nothing secret here: café ☕', 'utf8');
    expect(redact(bytes).output).toBe(bytes);
  });
});

describe('ASCII bytes made by bytesOf, and masking in place', () => {
  const text = `line one\n{"msg":"token \\n${GH} end"}\nexport API_TOKEN=Zx9kQ2vLm8wPq7Rt\n`;

  test('bytes of ASCII text (scanned as that text) give what any other bytes give', () => {
    const viaText = redact(bytesOf(text));
    const plain = redact(Buffer.from(text, 'utf8'));
    expect(viaText.findings).toEqual(plain.findings);
    expect(viaText.count).toBe(2);
    expect(viaText.output.equals(plain.output)).toBe(true);
  });

  test('inPlace masks the given buffer itself; without it the input is left as it was', () => {
    const copy = Buffer.from(text, 'utf8');
    const r1 = redact(copy);
    expect(r1.output).not.toBe(copy);
    expect(copy.toString()).toBe(text);

    const own = bytesOf(text);
    const r2 = redact(own, { inPlace: true });
    expect(r2.output).toBe(own);
    expect(own.toString()).not.toContain(GH);
    expect(own.equals(r1.output)).toBe(true);
    // Scanned again, the masked bytes are what is scanned (not the text they were made from).
    expect(redact(own).count).toBe(0);
  });

  test('an upload: `on` masks, `report` keeps the sent bytes and counts', () => {
    const body = { name: 'n', markdown: text, rawData: `{"k":"${GH}"}\n` };
    const on = prepareUpload(body, 'on');
    expect(on.upload.markdown.toString()).not.toContain(GH);
    expect(on.upload.rawData.toString()).not.toContain(GH);
    expect(on.findings).toEqual({ 'github-token': 2, 'secret-value': 1 });
    const report = prepareUpload(body, 'report');
    expect(report.upload.markdown.toString()).toBe(text);
    expect(report.upload.rawData.toString()).toContain(GH);
    expect(report.findings).toEqual(on.findings);
  });
});
