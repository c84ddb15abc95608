/** Accounts, browser sessions and device login (docs/accounts.md). */
import { Timestamp, z } from './common';

export const User = z.strictObject({ id: z.string(), email: z.string(), name: z.string().nullable(), role: z.enum(['admin', 'member']) }).meta({ id: 'User' });

export const SignedIn = z.strictObject({ user: User }).meta({ id: 'SignedIn' });

export const BrowserSession = z
  .strictObject({ user: User, csrfToken: z.string().meta({ description: 'Send as `X-CSRF-Token` on cookie-authenticated requests other than GET/HEAD.' }) })
  .meta({ id: 'BrowserSession' });

export const Empty = z.strictObject({}).meta({ id: 'Empty' });

export const DeviceLoginResult = z
  .strictObject({
    refreshToken: z.string().meta({ description: 'Lasts 10 years; listed with the user’s keys as `<client> on <hostname>`.' }),
    createdAt: Timestamp,
    expiresAt: Timestamp,
    user: z.strictObject({ email: z.string() }),
  })
  .meta({ id: 'DeviceLoginResult', description: 'No `{success, data}` envelope (client-compatible).' });

export const AccessToken = z
  .strictObject({
    accessToken: z.string().meta({ description: 'A JWT valid 1 hour, accepted wherever an API key is.' }),
    createdAt: Timestamp,
    expiresAt: Timestamp,
  })
  .meta({ id: 'AccessToken', description: 'No `{success, data}` envelope (client-compatible).' });

export const DeviceLogout = z.strictObject({ success: z.literal(true) }).meta({ id: 'DeviceLogout' });

export const SetupState = z
  .strictObject({
    needsSetup: z.boolean().meta({ description: 'True while no user exists: the console offers Create the first account.' }),
    signupEnabled: z.boolean().meta({ description: 'SIGNUP_ENABLED: self sign-up at POST /auth/sign-up.' }),
  })
  .meta({ id: 'SetupState' });

export const AdminUser = z
  .strictObject({
    id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    role: z.enum(['admin', 'member']),
    createdAt: Timestamp,
    disabledAt: Timestamp.nullable(),
  })
  .meta({ id: 'AdminUser' });

export const UserList = z.strictObject({ users: z.array(AdminUser), total: z.number().int() }).meta({ id: 'UserList' });

export const ResetLink = z
  .strictObject({
    link: z.string().meta({ description: '`<base>/reset-password?token=…`, one use.' }),
    expiresAt: Timestamp.meta({ description: 'One hour after it was made.' }),
  })
  .meta({ id: 'ResetLink' });

export const CreatedUser = z
  .strictObject({ user: AdminUser, link: z.string().optional(), expiresAt: Timestamp.optional() })
  .meta({ id: 'CreatedUser', description: '`link` and `expiresAt`: a reset link, when the user was created without a password.' });

export const AdminUserResult = z.strictObject({ user: AdminUser }).meta({ id: 'AdminUserResult' });

export const DeletedUser = z
  .strictObject({
    userId: z.string(),
    projects: z.number().int().meta({ description: 'Their own projects deleted.' }),
    sessions: z.number().int().meta({ description: 'The sessions in those projects.' }),
    teams: z.number().int().meta({ description: 'The teams they were removed from (their projects stay with the team).' }),
  })
  .meta({ id: 'DeletedUser' });

export const DeviceCodeResult = z
  .strictObject({
    code: z
      .string()
      .regex(/^[A-Z0-9]{6}$/)
      .meta({ description: 'Six letters and digits; shown as `ABC-123`.' }),
    expiresAt: Timestamp.meta({ description: 'Ten minutes after it was issued.' }),
  })
  .meta({ id: 'DeviceCode' });
