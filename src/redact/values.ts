import { STRONG_NAME_WORDS, WEAK_NAME_WORDS } from './rules';

/** Heuristics deciding whether a value next to a secret-sounding name is a secret. */

const STRONG = [...STRONG_NAME_WORDS].map((w) => w.replace(/[_-]/g, '')).sort((a, b) => b.length - a.length);
const TYPE_WORDS = new Set([
  'string',
  'str',
  'number',
  'int',
  'integer',
  'boolean',
  'bool',
  'any',
  'null',
  'none',
  'nil',
  'undefined',
  'true',
  'false',
  'required',
  'optional',
  'object',
  'bytes',
  'text',
  'unknown',
  'secret',
  'password',
  'token',
  'hidden',
  'masked',
  'sensitive',
  'env',
  'file',
  'auto',
  'default',
  'empty',
  'yes',
  'no',
]);

type Strength = 'strong' | 'weak';

/** 'strong' when the name says secret/token/password, 'weak' for a bare `…key`, else null. */
export function nameStrength(name: string): Strength | null {
  const norm = name.toLowerCase().replace(/[_.-]/g, '');
  for (const w of STRONG) {
    if (!norm.endsWith(w)) continue;
    if (w === 'pass' || w === 'pwd') return wordBoundaryAt(name, w.length) ? 'strong' : null;
    return 'strong';
  }
  for (const w of WEAK_NAME_WORDS) {
    if (norm.endsWith(w) && wordBoundaryAt(name, w.length)) return 'weak';
  }
  return null;
}

/** The last `len` letters of `name` start a word: at its start, after a separator, or a camel hump. */
function wordBoundaryAt(name: string, len: number): boolean {
  const at = name.length - len;
  if (at <= 0) return true;
  const before = name[at - 1];
  if (before === '_' || before === '-' || before === '.') return true;
  return /[a-z0-9]/.test(before) && /[A-Z]/.test(name[at]);
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEX_HASH_RE = /^(?:[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64}|[0-9a-f]{128})$/i;

export function acceptValue(value: string, strength: Strength, quoted: boolean, name: string): boolean {
  if (value.length < (strength === 'weak' ? 16 : 4)) return false;
  if (isReference(value) || isPlaceholder(value)) return false;
  if (UUID_RE.test(value)) return false;
  if (/^(?:\/|\.\.?\/|~\/|[A-Za-z]:\\)/.test(value) && !isBase64Key(value)) return false; // a path
  if (value.includes('://')) return false; // a URL: its credentials are the URL rule's
  if (TYPE_WORDS.has(value.toLowerCase())) return false;
  if (/^[0-9]+$/.test(value) && !/pass|pwd|pin|secret/i.test(name)) return false;
  if (strength === 'weak') {
    if (/\.[A-Za-z0-9]{1,5}$/.test(value) && value.includes('/')) return false; // a file's key
    return looksRandom(value) && !HEX_HASH_RE.test(value) && /^[A-Za-z0-9+/=_.~-]+$/.test(value);
  }
  if (/^[A-Za-z_]+$/.test(value)) {
    // Letters only: an identifier in code (`token = accessToken`), unless quoted and not
    // identifier-shaped (a passphrase).
    if (!quoted) return false;
    if (value.includes('_') || /[a-z][A-Z]/.test(value) || /^[A-Z]+$/.test(value)) return false;
  }
  if (!quoted && /^[A-Za-z_][A-Za-z0-9_]*\[[^\]]*$/.test(value)) return false; // `key = map[k`
  return true;
}

/** A reference to a secret kept elsewhere, not the secret itself. */
export function isReference(v: string): boolean {
  if (/^[{<[(#]/.test(v)) return true;
  // $VAR, ${VAR}, $var, %VAR%, %s, !Ref, *alias, &anchor — but `$ua4Nd…` (mixed case) is a literal.
  if (/^\$\{|^\$(?:[A-Z_][A-Z0-9_]*|[a-z_][a-z0-9_]*)$|^%[A-Z_][A-Z0-9_]*%$|^%[sd(]|^![A-Z][A-Za-z]*$|^[*&][A-Za-z_][\w-]*$/.test(v)) return true;
  if (/\(|\{\{|\}\}|REDACTED|process\.env|os\.environ|getenv|ENV\[|secrets\.|vault:/i.test(v)) return true;
  // A dotted identifier path: `config.token`, `self.password`, `req.headers.authorization`.
  if (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(v) && (v.match(/[0-9]/g)?.length ?? 0) <= 2) return true;
  return false;
}

/** Obvious stand-ins: `xxxx`, `****`, `<your-token>`, `your_api_key_here`, `…`. */
export function isPlaceholder(v: string): boolean {
  if (/^(.)\1*$/.test(v)) return true;
  if (/x{4,}|X{4,}|\*{3,}|\.\.\.|…|your[_-]|[_-]here$|placeholder|changeme|redacted/i.test(v)) return true;
  return false;
}

/** 20–200 characters of the base64 alphabet with upper and lower case and digits (an AWS secret key). */
function isBase64Key(v: string): boolean {
  return v.length >= 20 && v.length <= 200 && /^[A-Za-z0-9+/=]+$/.test(v) && /[A-Z]/.test(v) && /[a-z]/.test(v) && /[0-9]/.test(v);
}

/** Has letters and digits, and is not one repeated character. */
export function looksRandom(v: string): boolean {
  return v.length >= 8 && /[A-Za-z]/.test(v) && /[0-9]/.test(v) && !/^(.)\1*$/.test(v);
}
