/** Accounts, browser sessions and device login (docs/accounts.md). */
import { Timestamp, z } from './common';

export const User = z.strictObject({ id: z.string(), email: z.string(), name: z.string().nullable(), role: z.enum(['admin', 'member']) }).openapi('User');

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
  .strictObject({
    accessToken: z.string().openapi({ description: 'A JWT valid 1 hour, accepted wherever an API key is.' }),
    createdAt: Timestamp,
    expiresAt: Timestamp,
  })
  .openapi('AccessToken', { description: 'No `{success, data}` envelope (client-compatible).' });

export const DeviceLogout = z.strictObject({ success: z.literal(true) }).openapi('DeviceLogout');

/** First run, sign-up, reset links, the admins' Users page and /cli-login codes. */
const Password = z.string().min(10).max(256).openapi({ description: '10–256 characters.' });

export const SetupState = z
  .strictObject({
    needsSetup: z.boolean().openapi({ description: 'True while no user exists: the console offers Create the first account.' }),
    signupEnabled: z.boolean().openapi({ description: 'SIGNUP_ENABLED: self sign-up at POST /auth/sign-up.' }),
  })
  .openapi('SetupState');

export const NewAccountBody = z.object({ email: z.string(), name: z.string().nullable().optional(), password: Password }).openapi('NewAccount');

export const SignUpBody = NewAccountBody.extend({
  invitationToken: z
    .string()
    .optional()
    .openapi({ description: 'An open team invitation: the account joins its team (and may be created with sign-up disabled).' }),
}).openapi('SignUp');

const RevokeCredentials = z.boolean().nullable().optional().openapi({
  description: 'Also revoke every API key and device token of the user (and what was created with them). Absent or null: true; false keeps them.',
  default: true,
});

export const ChangePasswordBody = z
  .object({ currentPassword: z.string().min(1), newPassword: Password, revokeCredentials: RevokeCredentials })
  .openapi('ChangePassword');

export const ResetPasswordBody = z
  .object({ token: z.string().min(1).openapi({ description: 'The `token` of the reset link.' }), password: Password, revokeCredentials: RevokeCredentials })
  .openapi('ResetPassword');

export const AdminUser = z
  .strictObject({
    id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    role: z.enum(['admin', 'member']),
    createdAt: Timestamp,
    disabledAt: Timestamp.nullable(),
  })
  .openapi('AdminUser');

export const UserList = z.strictObject({ users: z.array(AdminUser), total: z.number().int() }).openapi('UserList');

export const CreateUserBody = z
  .object({
    email: z.string(),
    name: z.string().nullable().optional(),
    role: z.enum(['admin', 'member']).optional(),
    password: Password.optional().openapi({ description: 'Without it the answer carries a reset link to set one.' }),
  })
  .openapi('CreateUser');

export const ResetLink = z
  .strictObject({
    link: z.string().openapi({ description: '`<base>/reset-password?token=…`, one use.' }),
    expiresAt: Timestamp.openapi({ description: 'One hour after it was made.' }),
  })
  .openapi('ResetLink');

export const CreatedUser = z
  .strictObject({ user: AdminUser, link: z.string().optional(), expiresAt: Timestamp.optional() })
  .openapi('CreatedUser', { description: '`link` and `expiresAt`: a reset link, when the user was created without a password.' });

export const AdminUserResult = z.strictObject({ user: AdminUser }).openapi('AdminUserResult');

export const DeviceCodeResult = z
  .strictObject({
    code: z
      .string()
      .regex(/^[A-Z0-9]{6}$/)
      .openapi({ description: 'Six letters and digits; shown as `ABC-123`.' }),
    expiresAt: Timestamp.openapi({ description: 'Ten minutes after it was issued.' }),
  })
  .openapi('DeviceCode');
