import { addFindings, redact, toRedactions, type Findings, type Redaction, type RedactMode } from '../redact';

/** The parts of an upload that are stored, shown or indexed. */
interface RedactableUpload {
  name: string;
  markdown: Buffer;
  rawData: Buffer;
  /** The upload CLI's session data; absent keeps the stored one. */
  sessionData?: Buffer;
  projectName?: string;
  metaColumns: Record<string, string | null>;
  meta: { llmModels: string[]; tags: string[]; gitBranches: string[]; extra: Record<string, string> };
}

/**
 * Applies REDACT_SECRETS to a validated upload before anything is stored, logged or indexed:
 * `on` masks every secret (same byte length), `report` only counts them, `off` does nothing.
 */
export function redactUpload<T extends RedactableUpload>(up: T, mode: RedactMode): { upload: T; findings: Findings; sessionDataFindings: Findings | null } {
  const sessionDataFindings: Findings | null = up.sessionData === undefined ? null : {};
  if (mode === 'off') return { upload: up, findings: {}, sessionDataFindings };
  const findings: Findings = {};
  // With `on` the upload's own buffers are masked where they are (no copies of the content);
  // `report` keeps them as sent.
  const inPlace = mode === 'on';
  let sessionData = up.sessionData;
  if (sessionData !== undefined) {
    const r = redact(sessionData, { inPlace });
    if (r.count) addFindings(sessionDataFindings!, r.findings);
    sessionData = r.output;
  }
  const text = (s: string): string => {
    const r = redact(s);
    if (r.count) addFindings(findings, r.findings);
    return r.output;
  };
  const bytes = (b: Buffer): Buffer => {
    const r = redact(b, { inPlace });
    if (r.count) addFindings(findings, r.findings);
    return r.output;
  };
  const extra: Record<string, string> = {};
  for (const [k, v] of Object.entries(up.meta.extra)) {
    // A data property even for keys like `__proto__` (as validation stored them).
    Object.defineProperty(extra, k, { value: text(v), enumerable: true, writable: true, configurable: true });
  }
  const redacted: T = {
    ...up,
    name: text(up.name),
    markdown: bytes(up.markdown),
    rawData: bytes(up.rawData),
    sessionData,
    projectName: up.projectName === undefined ? undefined : text(up.projectName),
    metaColumns: Object.fromEntries(Object.entries(up.metaColumns).map(([k, v]) => [k, v === null ? null : text(v)])),
    meta: {
      ...up.meta,
      llmModels: up.meta.llmModels.map(text),
      tags: up.meta.tags.map(text),
      gitBranches: up.meta.gitBranches.map(text),
      extra,
    },
  };
  return { upload: mode === 'on' ? redacted : up, findings, sessionDataFindings };
}

/**
 * Stored form of findings (the `redactionsJson` column): `[{rule, count}]` for name, markdown,
 * raw data and metadata, then `[{rule, count, part: "sessionData"}]` for the session data, kept
 * apart because an upload without session data keeps the stored one (and its findings). Findings
 * made with REDACT_SECRETS=report carry `reported: true`: those secrets are still in the content,
 * so a rescan that masks them must not count them twice.
 */
interface StoredRedaction extends Redaction {
  part?: 'sessionData';
  reported?: true;
}

export function redactionsToJson(findings: Findings, sessionDataFindings: Findings = {}, mode: RedactMode = 'on'): string {
  const flag = mode === 'report' ? { reported: true as const } : {};
  const stored: StoredRedaction[] = [
    ...toRedactions(findings).map((r) => ({ ...r, ...flag })),
    ...toRedactions(sessionDataFindings).map((r) => ({ ...r, part: 'sessionData' as const, ...flag })),
  ];
  return JSON.stringify(stored);
}

function storedOf(json: string | null | undefined): StoredRedaction[] {
  if (!json) return [];
  try {
    const v = JSON.parse(json) as unknown;
    return Array.isArray(v) ? (v as StoredRedaction[]) : [];
  } catch {
    return [];
  }
}

function sum(json: string | null | undefined, keep: (r: StoredRedaction) => boolean): Findings {
  const out: Findings = {};
  for (const r of storedOf(json)) if (keep(r)) out[r.rule] = (out[r.rule] ?? 0) + r.count;
  return out;
}

/** Findings of the stored session data alone (kept when an upload sends none). */
export const sessionDataFindingsOf = (json: string | null | undefined): Findings => sum(json, (r) => r.part === 'sessionData');

/** Secrets already masked in the stored content, per part (what a rescan adds to). */
export const maskedFindingsOf = (json: string | null | undefined, part: 'upload' | 'sessionData'): Findings =>
  sum(json, (r) => !r.reported && (part === 'sessionData') === (r.part === 'sessionData'));

/** Findings as the API shows them: one `{rule, count}` per rule over all parts, sorted by rule. */
export function redactionsOf(json: string | null | undefined): Redaction[] {
  return toRedactions(sum(json, () => true));
}

/**
 * One text field written outside an upload (a PATCH, a GraphQL mutation: project and session
 * names, `userTitle`, tags, key names), treated like an upload's fields: with `on` every secret is
 * masked (same byte length), with `report` the text is kept; either way what was found is added
 * to `findings` when given.
 */
export function redactField(text: string, mode: RedactMode, findings?: Findings): string {
  if (mode === 'off') return text;
  const r = redact(text);
  if (r.count && findings) addFindings(findings, r.findings);
  return mode === 'on' ? r.output : text;
}

/** The stored findings with `findings` of the session's own fields added (REDACT_SECRETS `mode`). */
export function addRedactionsJson(json: string | null | undefined, findings: Findings, mode: RedactMode): string {
  const stored = storedOf(json);
  for (const r of toRedactions(findings)) {
    const same = stored.find((s) => s.rule === r.rule && s.part === undefined && !s.reported === (mode !== 'report'));
    if (same) same.count += r.count;
    else stored.push({ ...r, ...(mode === 'report' ? { reported: true as const } : {}) });
  }
  return JSON.stringify(stored);
}
