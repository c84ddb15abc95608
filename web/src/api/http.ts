/**
 * REST calls of the console (only the auth, keys-adjacent and device endpoints, which exist only on
 * REST). Same origin, the `sa_session` cookie authenticates; every write carries the session's
 * CSRF token.
 */
export interface ApiResult<T> {
  ok: boolean;
  status: number;
  data?: T;
  error?: string;
}

let csrfToken: string | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export function getCsrfToken(): string | null {
  return csrfToken;
}

/** A 401 on an authenticated call: the session ended (expired, signed out elsewhere, disabled). */
export const SESSION_LOST = 'sa:session-lost';

export function sessionLost(): void {
  window.dispatchEvent(new Event(SESSION_LOST));
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<ApiResult<T>> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    return { ok: false, status: 0, error: 'The service cannot be reached.' };
  }
  let json: { data?: unknown; error?: unknown } | null | undefined;
  try {
    json = (await res.json()) as { data?: unknown; error?: unknown } | null;
  } catch {
    json = undefined;
  }
  if (res.ok) return { ok: true, status: res.status, data: (json && 'data' in json ? json.data : json) as T };
  if (res.status === 401 && csrfToken && !path.startsWith('/api/v1/auth/')) sessionLost();
  return { ok: false, status: res.status, error: typeof json?.error === 'string' ? json.error : `Request failed (${res.status})` };
}
