/** Operations of browser sessions and device login (docs/accounts.md). */
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import * as A from '../../api/schemas/accounts';
import { envelope, z } from '../../api/schemas/common';
import { describe } from './operation';
import * as inputs from '../../services/inputs';

export function accountOperations(registry: OpenAPIRegistry): void {
  let tag = 'Accounts';
  describe(registry, {
    method: 'post',
    path: '/auth/sign-in',
    tag,
    auth: 'none',
    summary: 'Sign in to the console',
    body: A.SignInBody,
    description:
      'Unknown email and wrong password get the same 401 `Invalid email or password`. Failed sign-ins count per address and 10 per account per 15 minutes → 429. Successful ones are limited too (`SIGN_INS_PER_ACCOUNT` and `SIGN_INS_PER_ADDRESS`, 30 each per 15 minutes → 429), and a user holds at most `BROWSER_SESSIONS_PER_USER` (100) browser sessions: a new one ends the oldest. Every request counts against the address’s `ANONYMOUS_REQUESTS_PER_MINUTE`.',
    responses: { 200: { description: 'Signed in; the browser session is in the cookie.', schema: envelope(A.SignedIn), headers: ['Set-Cookie'] } },
    errors: [401, 403, 429],
  });
  describe(registry, {
    method: 'post',
    path: '/auth/sign-out',
    tag,
    auth: 'none',
    summary: 'End the browser session',
    description: 'With a live `sa_session` cookie the CSRF rule applies (403 `Invalid CSRF token`); without one it just clears the cookie.',
    responses: { 200: { description: 'Signed out.', schema: envelope(A.Empty), headers: ['Set-Cookie'] } },
    errors: [403],
  });
  describe(registry, {
    method: 'get',
    path: '/auth/session',
    tag,
    auth: 'key',
    summary: 'The signed-in user and the CSRF token',
    description: 'Only the `sa_session` cookie counts here; 401 without a live browser session.',
    responses: { 200: { description: 'The browser session.', schema: envelope(A.BrowserSession) } },
  });
  describe(registry, {
    method: 'get',
    path: '/auth/setup',
    tag,
    auth: 'none',
    summary: 'Whether the first account is still to be created',
    responses: { 200: { description: 'First-run and sign-up state.', schema: envelope(A.SetupState) } },
  });
  describe(registry, {
    method: 'post',
    path: '/auth/setup',
    tag,
    auth: 'none',
    summary: 'Create the first account (an admin) and sign it in',
    description:
      'Only while no user exists; afterwards 409 at once (before the body is read). Of concurrent attempts one creates the account, the others get 409. A foreign `Origin` → 403. Every request counts against the address’s `ANONYMOUS_REQUESTS_PER_MINUTE` → 429.',
    body: A.NewAccountBody,
    responses: { 201: { description: 'Created and signed in.', schema: envelope(A.SignedIn), headers: ['Set-Cookie'] } },
    errors: [403, 409, 429],
  });
  describe(registry, {
    method: 'post',
    path: '/auth/sign-up',
    tag,
    auth: 'none',
    summary: 'Create a member account and sign it in',
    description:
      'Only with `SIGNUP_ENABLED=true`, else 403 `Sign-up is disabled` — unless the body carries `invitationToken`, an open team invitation: then the account is created (for the invitation’s email when it names one, else 403) and joins the team. An email in use → 409. Each well-formed attempt counts against the address’s `SIGN_UPS_PER_HOUR` (10) → 429.',
    body: A.SignUpBody,
    responses: { 201: { description: 'Created and signed in.', schema: envelope(A.SignedIn), headers: ['Set-Cookie'] } },
    errors: [403, 409, 429],
  });
  describe(registry, {
    method: 'post',
    path: '/auth/reset-password',
    tag,
    auth: 'none',
    summary: 'Set a password through a one-time reset link',
    description:
      '400 `Invalid or expired reset link` for a used, expired or unknown token (counted against the failed-authentication limit). Every browser session of the user ends, and, unless `revokeCredentials` is false, every API key and device token.',
    body: A.ResetPasswordBody,
    responses: { 200: { description: 'Password set.', schema: envelope(A.Empty), headers: ['Set-Cookie'] } },
    errors: [403, 429],
  });
  describe(registry, {
    method: 'post',
    path: '/auth/password',
    tag,
    auth: 'key',
    summary: 'Change your password',
    description:
      '403 `Current password is incorrect`. Every other browser session of the user ends; the one making the change stays. Unless `revokeCredentials` is false, every API key and device token of the user is revoked too (the key making the request included).',
    body: A.ChangePasswordBody,
    responses: { 200: { description: 'Changed.', schema: envelope(A.Empty) } },
    errors: [403],
  });
  describe(registry, {
    method: 'post',
    path: '/auth/sign-out-everywhere',
    tag,
    auth: 'key',
    summary: 'End every browser session of yours',
    description: 'API keys and device tokens keep working (revoke them on the keys page).',
    responses: { 200: { description: 'Signed out everywhere.', schema: envelope(A.Empty), headers: ['Set-Cookie'] } },
    errors: [403],
  });

  tag = 'Users';
  const userId = z.object({ userId: z.string() });
  describe(registry, {
    method: 'get',
    path: '/users',
    tag,
    auth: 'key',
    summary: 'Every user (admins)',
    responses: { 200: { description: 'Oldest first.', schema: envelope(A.UserList) } },
    errors: [403],
  });
  describe(registry, {
    method: 'post',
    path: '/users',
    tag,
    auth: 'key',
    summary: 'Create a user (admins)',
    body: A.CreateUserBody,
    responses: { 201: { description: 'Created.', schema: envelope(A.CreatedUser) } },
    errors: [403, 409],
  });
  describe(registry, {
    method: 'post',
    path: '/users/{userId}/reset-password',
    tag,
    auth: 'key',
    summary: 'A one-time reset link for a user (admins)',
    params: userId,
    responses: { 200: { description: 'Valid one hour, one use.', schema: envelope(A.ResetLink) } },
    errors: [403, 404],
  });
  describe(registry, {
    method: 'post',
    path: '/users/{userId}/disable',
    tag,
    auth: 'key',
    summary: 'Disable a user (admins)',
    description: 'Their keys, device tokens and browser sessions stop working at once. Disabling yourself → 400.',
    params: userId,
    responses: { 200: { description: 'Disabled.', schema: envelope(A.AdminUserResult) } },
    errors: [403, 404],
  });
  describe(registry, {
    method: 'post',
    path: '/users/{userId}/enable',
    tag,
    auth: 'key',
    summary: 'Enable a disabled user (admins)',
    params: userId,
    responses: { 200: { description: 'Enabled; their keys and device tokens work again.', schema: envelope(A.AdminUserResult) } },
    errors: [403, 404],
  });

  tag = 'Device login';
  describe(registry, {
    method: 'post',
    path: '/device-codes',
    tag,
    auth: 'key',
    summary: 'A code for /cli-login',
    description:
      'Single use, valid 10 minutes, compared case-insensitively; the dash of `ABC-123` is cosmetic. Asked for with an API key or a device access token, the code gives a device token that expires no later than that key (or device session) and is revoked with it. With `teamId`, the client logged in with it creates its new projects in that team (admin or member; a team you are not in → 404 `Team not found`, a viewer → 403).',
    body: inputs.DeviceCodeInput,
    bodyOptional: true,
    responses: { 201: { description: 'The code.', schema: envelope(A.DeviceCodeResult) } },
    errors: [400, 403, 404],
  });
  describe(registry, {
    method: 'post',
    path: '/device-login',
    tag,
    auth: 'none',
    summary: 'Exchange a /cli-login code for a refresh token',
    body: A.DeviceLoginBody,
    description:
      'No Authorization. Codes are single use, valid 10 minutes. 401: `Invalid or expired device code` or `Device code has already been used`. Failures count against the failed-authentication limit of the address and against the service-wide `DEVICE_LOGIN_FAILURE_BUDGET` (100 per 10 minutes; once spent, every address gets 429 until the window ends).',
    responses: { 200: { description: 'A refresh token (no envelope).', schema: A.DeviceLoginResult } },
    errors: [401, 429],
  });
  describe(registry, {
    method: 'post',
    path: '/device-refresh',
    tag,
    auth: 'refresh',
    summary: 'A fresh access token',
    description: '`Authorization: Bearer <refreshToken>`, no body. A bad, expired or revoked refresh token → 401.',
    responses: { 200: { description: 'An access token (no envelope).', schema: A.AccessToken } },
    errors: [429],
  });
  describe(registry, {
    method: 'post',
    path: '/device-logout',
    tag,
    auth: 'none',
    summary: 'Revoke a refresh token',
    description:
      '`Authorization: Bearer <refreshToken>`. Always 200. Also revokes what was created with the device session: keys minted with its access tokens and device tokens through codes they asked for, at any depth.',
    headers: z.object({ Authorization: z.string().optional() }),
    responses: { 200: { description: 'Revoked (or nothing to revoke).', schema: A.DeviceLogout } },
  });
}
