/**
 * An archive's manifest.json parsed as its bytes arrive (docs/export-import.md): the `files`
 * array at its top level is handed over one element at a time and never kept, so that reading a
 * manifest takes memory for one element, not for the whole text, and each chunk is a short step
 * of the event loop. Everything else of the document is kept (it is small: a few numbers and
 * strings; more than MAX_KEPT values of it is refused). Any valid JSON is read, compact or
 * indented, keys in any order. Pure.
 */

/** A single string or number longer than this is refused (no manifest has one). */
const MAX_TOKEN = 64 * 1024;
/** Values kept outside `files` (the top-level fields), and the nesting allowed in all. */
const MAX_KEPT = 1000;
const MAX_DEPTH = 32;

const WS = /[ \t\n\r]*/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
/** A prefix of a string that may still become one. */
const STRING_START = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{0,4})?)*$/y;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
/** Number characters up to the end of what came: the number may go on in the next piece. */
const NUMBER_TAIL = /-?\d*(?:\.\d*)?(?:[eE][+-]?\d*)?$/y;
const LITERALS: Record<string, unknown> = { true: true, false: false, null: null };

interface Frame {
  kind: 'object' | 'array';
  value: Record<string, unknown> | unknown[];
  /** The key whose value comes next (objects). */
  key: string | null;
  /** What may come next: the first value or key (or the end), a key, a `:`, a value, or a `,` / the end. */
  expect: 'first' | 'key' | 'colon' | 'value' | 'next';
  /** The top-level `files` array: its elements go to `onFile`, not into the array. */
  streamed: boolean;
  /** Inside one element of `files`. */
  inFile: boolean;
}

export class ManifestSyntaxError extends Error {}

interface ManifestParser {
  /** The next piece of the text (any split, even inside a token). */
  write(text: string): void;
  /** The end of the text: the document without its `files` elements. Throws when incomplete. */
  end(): Record<string, unknown>;
}

export function manifestParser(onFile: (file: unknown, index: number) => void): ManifestParser {
  let buf = '';
  const stack: Frame[] = [];
  let root: unknown;
  let done = false;
  let kept = 0;
  let inElement = 0;
  let files = 0;
  const fail = (what: string): never => {
    throw new ManifestSyntaxError(`manifest.json is not valid JSON (${what})`);
  };

  /** A complete value: into its container, or to onFile, or as the document. */
  function put(value: unknown): void {
    const top = stack[stack.length - 1];
    if (!top) {
      root = value;
      done = true;
      return;
    }
    if (top.streamed) {
      inElement = 0;
      onFile(value, files++);
    } else {
      if (top.inFile ? ++inElement > MAX_KEPT : ++kept > MAX_KEPT) fail(top.inFile ? 'an element of "files" too large' : 'too many values outside "files"');
      if (top.kind === 'array') (top.value as unknown[]).push(value);
      // A data property even for a key like `__proto__`.
      else Object.defineProperty(top.value, top.key!, { value, enumerable: true, writable: true, configurable: true });
    }
    top.expect = 'next';
  }

  function open(kind: Frame['kind']): void {
    const top = stack[stack.length - 1];
    if (stack.length >= MAX_DEPTH) fail('nested too deep');
    const streamed = kind === 'array' && stack.length === 1 && top.kind === 'object' && top.key === 'files';
    stack.push({ kind, value: kind === 'array' ? [] : {}, key: null, expect: 'first', streamed, inFile: !!top && (top.streamed || top.inFile) });
  }

  /** Reads what it can from `buf`; what may be an incomplete token stays for the next write. */
  function run(final: boolean): void {
    let i = 0;
    for (;;) {
      WS.lastIndex = i;
      WS.test(buf);
      i = WS.lastIndex;
      if (i >= buf.length) break;
      if (done) fail('text after the end');
      const c = buf[i];
      const top = stack[stack.length - 1];
      const expect = top?.expect ?? 'value';
      if (c === '}' || c === ']') {
        if (!top || top.kind !== (c === '}' ? 'object' : 'array') || (expect !== 'next' && expect !== 'first')) fail(`unexpected ${c}`);
        stack.pop();
        put(top.value);
        i++;
        continue;
      }
      if (c === ',') {
        if (expect !== 'next') fail('unexpected ,');
        top.expect = top.kind === 'object' ? 'key' : 'value';
        i++;
        continue;
      }
      if (c === ':') {
        if (expect !== 'colon') fail('unexpected :');
        top.expect = 'value';
        i++;
        continue;
      }
      if (expect === 'next' || expect === 'colon') fail(`unexpected ${JSON.stringify(c)}`);
      const wantsKey = top?.kind === 'object' && (expect === 'first' || expect === 'key');
      if (c === '"') {
        STRING.lastIndex = i;
        if (!STRING.test(buf)) {
          STRING_START.lastIndex = i;
          if (final || !STRING_START.test(buf)) fail('bad string');
          if (buf.length - i > MAX_TOKEN) fail('a string too long');
          break;
        }
        const s = JSON.parse(buf.slice(i, STRING.lastIndex)) as string;
        i = STRING.lastIndex;
        if (wantsKey) {
          top.key = s;
          top.expect = 'colon';
        } else put(s);
        continue;
      }
      if (wantsKey) fail('a key must be a string');
      if (c === '{' || c === '[') {
        open(c === '{' ? 'object' : 'array');
        i++;
        continue;
      }
      if (c === '-' || (c >= '0' && c <= '9')) {
        NUMBER_TAIL.lastIndex = i;
        if (!final && NUMBER_TAIL.test(buf)) {
          if (buf.length - i > MAX_TOKEN) fail('a number too long');
          break;
        }
        NUMBER.lastIndex = i;
        if (!NUMBER.test(buf) || NUMBER.lastIndex - i > MAX_TOKEN) fail('bad number');
        put(Number(buf.slice(i, NUMBER.lastIndex)));
        i = NUMBER.lastIndex;
        continue;
      }
      const word = /^[a-z]+/.exec(buf.slice(i, i + 6))?.[0] ?? '';
      if (word in LITERALS) {
        put(LITERALS[word]);
        i += word.length;
        continue;
      }
      if (!final && i + word.length === buf.length && Object.keys(LITERALS).some((l) => l.startsWith(word))) break;
      fail(`unexpected ${JSON.stringify(c)}`);
    }
    buf = buf.slice(i);
  }

  return {
    write(text) {
      buf += text;
      run(false);
    },
    end() {
      run(true);
      if (!done) fail('it ends early');
      if (!root || typeof root !== 'object' || Array.isArray(root)) fail('not an object');
      return root as Record<string, unknown>;
    },
  };
}
