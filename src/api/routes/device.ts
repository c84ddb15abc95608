/** Device login of the upload CLI and the desktop app. */
import { defineRoute } from '../route';
import * as A from '../schemas/accounts';
import * as accountInputs from '../../services/account-inputs';
import { envelope, z } from '../schemas/common';
import * as inputs from '../../services/inputs';

export const deviceRoutes = {
  createDeviceCode: defineRoute({
    method: 'post',
    path: '/device-codes',
    tag: 'Device login',
    auth: 'key',
    summary: 'A code for /cli-login',
    description:
      'Single use, valid 10 minutes, compared case-insensitively; the dash of `ABC-123` is cosmetic. Asked for with an API key or a device access token, the code gives a device token that expires no later than that key (or device session) and is revoked with it. With `teamId`, the client logged in with it creates its new projects in that team (admin or member; a team you are not in → 404 `Team not found`, a viewer → 403).',
    body: inputs.DeviceCodeInput,
    bodyOptional: true,
    responses: { 201: { description: 'The code.', schema: envelope(A.DeviceCodeResult) } },
    errors: [400, 403, 404],
  }),
  deviceLogin: defineRoute({
    method: 'post',
    path: '/device-login',
    tag: 'Device login',
    auth: 'none',
    rateLimit: 'anonymous',
    summary: 'Exchange a /cli-login code for a refresh token',
    body: accountInputs.DeviceLoginInput,
    description:
      'No Authorization. Codes are single use, valid 10 minutes. 401: `Invalid or expired device code` or `Device code has already been used`. Failures count against the failed-authentication limit of the address and against the service-wide `DEVICE_LOGIN_FAILURE_BUDGET` (100 per 10 minutes; once spent, every address gets 429 until the window ends).',
    responses: { 200: { description: 'A refresh token (no envelope).', schema: A.DeviceLoginResult } },
    errors: [401, 429],
  }),
  deviceRefresh: defineRoute({
    method: 'post',
    path: '/device-refresh',
    tag: 'Device login',
    auth: 'refresh',
    summary: 'A fresh access token',
    description: '`Authorization: Bearer <refreshToken>`, no body. A bad, expired or revoked refresh token → 401.',
    responses: { 200: { description: 'An access token (no envelope).', schema: A.AccessToken } },
    errors: [429],
  }),
  deviceLogout: defineRoute({
    method: 'post',
    path: '/device-logout',
    tag: 'Device login',
    auth: 'none',
    summary: 'Revoke a refresh token',
    description:
      '`Authorization: Bearer <refreshToken>`. Always 200. Also revokes what was created with the device session: keys minted with its access tokens and device tokens through codes they asked for, at any depth.',
    headers: z.object({ Authorization: z.string().optional() }),
    responses: { 200: { description: 'Revoked (or nothing to revoke).', schema: A.DeviceLogout } },
  }),
};
