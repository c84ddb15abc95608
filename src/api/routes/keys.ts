/** API keys. */
import { defineRoute } from '../route';
import { envelope, z } from '../schemas/common';
import * as R from '../schemas/resources';
import * as inputs from '../../services/inputs';

export const keyRoutes = {
  listKeys: defineRoute({
    method: 'get',
    path: '/keys',
    tag: 'API keys',
    auth: 'key',
    summary: 'List your API keys',
    description: 'Device refresh tokens (device login) appear here too. Never tokens.',
    responses: { 200: { description: 'Your keys.', schema: envelope(z.strictObject({ keys: z.array(R.ApiKey), total: z.int().min(0) })) } },
  }),
  createKey: defineRoute({
    method: 'post',
    path: '/keys',
    tag: 'API keys',
    auth: 'key',
    summary: 'Create an API key',
    body: inputs.CreateKeyInput,
    description:
      'Made with an expiring key or a device access token, the new key expires no later than that key (or device session) and is revoked with it. `Idempotency-Key` is not honoured here: a replay would need the token, which is never stored. With `teamId` (a team where you are admin or member) the projects created through the key are the team’s; a team you are not in → 404 `Team not found`, a viewer → 403.',
    responses: { 201: { description: 'The key and its token (shown once).', schema: envelope(R.CreatedKey) } },
    errors: [403, 404],
  }),
  revokeKey: defineRoute({
    method: 'delete',
    path: '/keys/{keyId}',
    tag: 'API keys',
    auth: 'key',
    summary: 'Revoke an API key',
    description:
      'Takes effect on the very next request. Keys and device tokens created with this key (directly or through a /cli-login code it asked for) are revoked with it, at any depth. A key may revoke itself; another user’s key → 404.',
    params: z.object({ keyId: z.string() }),
    responses: { 200: { description: 'The key, `revokedAt` set.', schema: envelope(z.strictObject({ key: R.ApiKey })) } },
    errors: [404],
  }),
};
