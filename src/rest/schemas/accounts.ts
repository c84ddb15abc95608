/** Accounts, browser sessions (§10) and device login (§11). */
import { Timestamp, z } from './common';

export const User = z
  .strictObject({ id: z.string(), email: z.string(), name: z.string().nullable(), role: z.enum(['admin', 'member']) })
  .openapi('User');

export const SignInBody = z.object({ email: z.string().min(1), password: z.string().min(1) }).openapi('SignIn');

export const SignedIn = z.strictObject({ user: User }).openapi('SignedIn');

export const BrowserSession = z
  .strictObject({ user: User, csrfToken: z.string().openapi({ description: 'Send as `X-CSRF-Token` on cookie-authenticated requests other than GET/HEAD.' }) })
  .openapi('BrowserSession');

export const Empty = z.strictObject({}).openapi('Empty');

export const DeviceLoginBody = z
  .object({
    device_code: z.string().openapi({ description: 'The code shown on /cli-login (`ABC-123`; the dash is cosmetic, case-insensitive).' }),
    hostname: z.string(),
    os: z.string(),
    os_version: z.string(),
    os_display_name: z.string(),
    architecture: z.string(),
    username: z.string(),
    client: z.string(),
    client_version: z.string(),
  })
  .partial({ hostname: true, os: true, os_version: true, os_display_name: true, architecture: true, username: true, client: true, client_version: true })
  .openapi('DeviceLogin');

export const DeviceLoginResult = z
  .strictObject({
    refreshToken: z.string().openapi({ description: 'Lasts 10 years; listed with the user’s keys as `<client> on <hostname>`.' }),
    createdAt: Timestamp,
    expiresAt: Timestamp,
    user: z.strictObject({ email: z.string() }),
  })
  .openapi('DeviceLoginResult', { description: 'No `{success, data}` envelope (client-compatible).' });

export const AccessToken = z
  .strictObject({ accessToken: z.string().openapi({ description: 'A JWT valid 1 hour, accepted wherever an API key is.' }), createdAt: Timestamp, expiresAt: Timestamp })
  .openapi('AccessToken', { description: 'No `{success, data}` envelope (client-compatible).' });

export const DeviceLogout = z.strictObject({ success: z.literal(true) }).openapi('DeviceLogout');
