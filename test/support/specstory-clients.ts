/**
 * The real clients' requests, byte for byte as their source builds them (specstoryai/getspecstory
 * specstory-cli/pkg/cloud, specstory-cloud-sdk-typescript src/http.ts, specstory-cloud-sdk-python
 * specstory/_http.py), and the upload CLI's sync decision replayed from sync.go's requiresSync.
 */
import zlib from 'node:zlib';
import type { TestApp, TestResponse } from './app';

export const CLI_VERSION = '1.12.0';
/** GetUserAgent(): fmt.Sprintf("%s/%s SpecStory, Inc.", ClientName, clientVersion). */
export const CLI_USER_AGENT = `specstory-cli/${CLI_VERSION} SpecStory, Inc.`;
export const SESSION_DATA_MEDIA_TYPE = 'application/vnd.specstory.session-data+json';

/**
 * Go's json.Marshal: HTML-safe escaping of <, >, & as \u003c, \u003e, \u0026 and of U+2028/U+2029
 * (the receiving JSON parser must undo them; the bytes stored must be the original ones).
 */
export function goJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** The CLI's APIRequest struct, in its field order, `sessionData` omitted when empty. */
export interface CliUpload {
  projectId: string;
  projectName: string;
  name: string;
  markdown: string;
  rawData: string;
  sessionData?: string;
  metadata: { clientName: string; clientVersion: string; agentName: string; deviceId: string; machineName?: string; title?: string };
}

export function cliUploadBody(u: CliUpload): Buffer {
  const ordered: Record<string, unknown> = {
    projectId: u.projectId,
    projectName: u.projectName,
    name: u.name,
    markdown: u.markdown,
    rawData: u.rawData,
  };
  if (u.sessionData) ordered.sessionData = u.sessionData;
  const m: Record<string, string> = {
    clientName: u.metadata.clientName,
    clientVersion: u.metadata.clientVersion,
    agentName: u.metadata.agentName,
    deviceId: u.metadata.deviceId,
  };
  if (u.metadata.machineName) m.machineName = u.metadata.machineName;
  if (u.metadata.title) m.title = u.metadata.title;
  ordered.metadata = m;
  return zlib.gzipSync(Buffer.from(goJson(ordered), 'utf8'));
}

/** The CLI's sync PUT (performSync): gzip body and its four headers plus Authorization. */
export function cliPut(app: TestApp, token: string, projectId: string, sessionId: string, u: CliUpload): Promise<TestResponse> {
  return app.request('PUT', `/api/v1/projects/${projectId}/sessions/${sessionId}`, {
    token,
    body: cliUploadBody(u),
    headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', Accept: 'application/json', 'User-Agent': CLI_USER_AGENT },
  });
}

/** skillsAPIRequest (entitlement, resume lists, resume search): Accept JSON, body via json.Marshal. */
export function cliApi(app: TestApp, token: string, method: string, path: string, body?: unknown): Promise<TestResponse> {
  const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': CLI_USER_AGENT };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  return app.request(method, path, { token, body: body === undefined ? undefined : Buffer.from(goJson(body), 'utf8'), headers });
}

/** fetchBulkSessionSizes and the HEAD of requiresSync send only Authorization and User-Agent. */
export const cliBare = (app: TestApp, token: string, method: string, path: string) =>
  app.request(method, path, { token, headers: { 'User-Agent': CLI_USER_AGENT } });

/** FetchSessionData: the session-data Accept. */
export const cliFetchSessionData = (app: TestApp, token: string, projectId: string, sessionId: string) =>
  app.request('GET', `/api/v1/projects/${projectId}/sessions/${sessionId}`, {
    token,
    headers: { Accept: SESSION_DATA_MEDIA_TYPE, 'User-Agent': CLI_USER_AGENT },
  });

/** requiresSync, batch mode: the /sizes map (Go's zero value for a missing key). */
export function requiresSyncBulk(sizes: Record<string, number>, sessionId: string, localMarkdown: string): boolean {
  if (!(sessionId in sizes)) return true;
  const localSize = Buffer.byteLength(localMarkdown, 'utf8');
  const serverSessionDataSize = sizes[`${sessionId}:sessionData`] ?? 0;
  return localSize > sizes[sessionId] || serverSessionDataSize === 0;
}

/** requiresSync, single-session mode: the HEAD response (strconv.Atoi failures read as "sync"). */
export function requiresSyncHead(res: TestResponse, localMarkdown: string): boolean {
  if (res.status === 404) return true;
  if (res.status !== 200) return true;
  const atoi = (v: unknown) => (typeof v === 'string' && /^[+-]?\d+$/.test(v) ? Number(v) : NaN);
  const serverSize = atoi(res.headers['x-markdown-size']);
  if (Number.isNaN(serverSize)) return true;
  if (Buffer.byteLength(localMarkdown, 'utf8') > serverSize) return true;
  const sd = atoi(res.headers['x-session-data-size']);
  return !(sd > 0);
}

/** The TypeScript SDK's headers (performRequest): JSON body via JSON.stringify. */
export function tsSdk(app: TestApp, token: string, method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<TestResponse> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': 'specstory-sdk-typescript/0.1.0',
    'X-SDK-Version': '0.1.0',
    'X-SDK-Language': 'typescript',
  };
  if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
  return app.request(method, path, { token, body: body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8'), headers });
}

/** Python's json.dumps defaults (what httpx sends for json=…): ", " and ": ", non-ASCII as \uXXXX. */
export function pyJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(pyJson).join(', ')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${pyJson(k)}: ${pyJson(x)}`)
      .join(', ')}}`;
  }
  const s = JSON.stringify(v);
  return typeof v === 'string' ? s.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : s;
}

/** The Python SDK's headers (specstory/_http.py). */
export function pySdk(app: TestApp, token: string, method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<TestResponse> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': 'specstory-sdk-python/0.1.0',
    'X-SDK-Version': '0.1.0',
    'X-SDK-Language': 'python',
  };
  if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
  return app.request(method, path, { token, body: body === undefined ? undefined : Buffer.from(pyJson(body), 'utf8'), headers });
}
