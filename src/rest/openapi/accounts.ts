/** Operations of contract §10 (browser sessions) and §11 (device login). */
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import * as A from '../schemas/accounts';
import { envelope, z } from '../schemas/common';
import { describe } from './operation';

export function accountOperations(registry: OpenAPIRegistry): void {
  let tag = 'Accounts';
  describe(registry, {
    method: 'post', path: '/auth/sign-in', tag, auth: 'none', summary: 'Sign in to the console', body: A.SignInBody,
    description: 'Unknown email and wrong password get the same 401 `Invalid email or password`. Failed sign-ins count per address and 10 per account per 15 minutes → 429.',
    responses: { 200: { description: 'Signed in; the browser session is in the cookie.', schema: envelope(A.SignedIn), headers: ['Set-Cookie'] } },
    errors: [401, 403, 429],
  });
  describe(registry, {
    method: 'post', path: '/auth/sign-out', tag, auth: 'key', summary: 'End the browser session',
    responses: { 200: { description: 'Signed out.', schema: envelope(A.Empty), headers: ['Set-Cookie'] } },
    errors: [403],
  });
  describe(registry, {
    method: 'get', path: '/auth/session', tag, auth: 'key', summary: 'The signed-in user and the CSRF token',
    responses: { 200: { description: 'The browser session.', schema: envelope(A.BrowserSession) } },
  });

  tag = 'Device login';
  describe(registry, {
    method: 'post', path: '/device-login', tag, auth: 'none', summary: 'Exchange a /cli-login code for a refresh token', body: A.DeviceLoginBody,
    description: 'No Authorization. Codes are single use, valid 10 minutes. 401: `Invalid or expired device code` or `Device code has already been used`. Failures count against the failed-authentication limit.',
    responses: { 200: { description: 'A refresh token (no envelope).', schema: A.DeviceLoginResult } },
    errors: [401, 429],
  });
  describe(registry, {
    method: 'post', path: '/device-refresh', tag, auth: 'refresh', summary: 'A fresh access token',
    description: '`Authorization: Bearer <refreshToken>`, no body. A bad, expired or revoked refresh token → 401.',
    responses: { 200: { description: 'An access token (no envelope).', schema: A.AccessToken } },
  });
  describe(registry, {
    method: 'post', path: '/device-logout', tag, auth: 'none', summary: 'Revoke a refresh token',
    description: '`Authorization: Bearer <refreshToken>`. Always 200.',
    headers: z.object({ Authorization: z.string().optional() }),
    responses: { 200: { description: 'Revoked (or nothing to revoke).', schema: A.DeviceLogout } },
  });
}
