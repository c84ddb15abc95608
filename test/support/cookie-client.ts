import type { TestApp, TestResponse, RequestOptions } from './app';

/**
 * A browser's view of the API for tests: keeps the `sa_session` cookie it is given and the
 * session's CSRF token, and sends them back like the console does.
 */
export interface Browser {
  cookie: string | null;
  csrf: string | null;
  request(method: string, urlPath: string, opts?: RequestOptions & { csrf?: boolean }): Promise<TestResponse>;
  signIn(email: string, password: string): Promise<TestResponse>;
}

export function sessionCookieOf(r: TestResponse): { value: string | null; attributes: string } | null {
  const set = ([] as string[]).concat(r.headers['set-cookie'] ?? []);
  const line = set.find((c) => c.startsWith('sa_session='));
  if (!line) return null;
  const [pair, ...attrs] = line.split(';');
  const value = decodeURIComponent(pair.slice('sa_session='.length));
  return { value: value || null, attributes: attrs.map((a) => a.trim()).join('; ') };
}

export function browser(app: TestApp): Browser {
  const b: Browser = {
    cookie: null,
    csrf: null,
    async request(method, urlPath, opts = {}) {
      const headers: Record<string, string> = { ...(opts.headers ?? {}) };
      if (b.cookie) headers.Cookie = `sa_session=${b.cookie}`;
      if (opts.csrf !== false && b.csrf && method !== 'GET' && method !== 'HEAD') headers['X-CSRF-Token'] = b.csrf;
      const r = await app.request(method, urlPath, { ...opts, headers });
      const c = sessionCookieOf(r);
      if (c) b.cookie = c.value;
      return r;
    },
    async signIn(email, password) {
      const r = await b.request('POST', '/api/v1/auth/sign-in', { body: { email, password } });
      if (r.status === 200) {
        const s = await b.request('GET', '/api/v1/auth/session');
        b.csrf = s.body?.data?.csrfToken ?? null;
      }
      return r;
    },
  };
  return b;
}
