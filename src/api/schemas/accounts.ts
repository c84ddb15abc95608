/** Accounts, browser sessions and device login (docs/accounts.md). */
import { Timestamp, z } from './common';

export const User = z.strictObject({ id: z.string(), email: z.string(), name: z.string().nullable(), role: z.enum(['admin', 'member']) }).meta({ id: 'User' });

export const SignInBody = z.object({ email: z.string().min(1), password: z.string().min(1) }).meta({ id: 'SignIn' });

export const SignedIn = z.strictObject({ user: User }).meta({ id: 'SignedIn' });

export const BrowserSession = z
  .strictObject({ user: User, csrfToken: z.string().meta({ description: 'Send as `X-CSRF-Token` on cookie-authenticated requests other than GET/HEAD.' }) })
  .meta({ id: 'BrowserSession' });

export const Empty = z.strictObject({}).meta({ id: 'Empty' });

export const DeviceLoginBody = z
  .object({
    device_code: z.string().meta({ description: 'The code shown on /cli-login (`ABC-123`; the dash is cosmetic, case-insensitive).' }),
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
  .meta({ id: 'DeviceLogin' });

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

/** First run, sign-up, reset links, the admins' Users page and /cli-login codes. */
const Password = z.string().min(10).max(256).meta({ description: '10–256 characters.' });

export const SetupState = z
  .strictObject({
    needsSetup: z.boolean().meta({ description: 'True while no user exists: the console offers Create the first account.' }),
    signupEnabled: z.boolean().meta({ description: 'SIGNUP_ENABLED: self sign-up at POST /auth/sign-up.' }),
  })
  .meta({ id: 'SetupState' });

export const NewAccountBody = z.object({ email: z.string(), name: z.string().nullable().optional(), password: Password }).meta({ id: 'NewAccount' });

// An intersection, not `.extend()`: the document then refers to NewAccount (allOf) instead of repeating it.
export const SignUpBody = z
  .intersection(
    NewAccountBody,
    z.object({
      invitationToken: z
        .string()
        .optional()
        .meta({ description: 'An open team invitation: the account joins its team (and may be created with sign-up disabled).' }),
    }),
  )
  .meta({ id: 'SignUp' });

const RevokeCredentials = z.boolean().nullable().optional().meta({
  description: 'Also revoke every API key and device token of the user (and what was created with them). Absent or null: true; false keeps them.',
  default: true,
});

export const ChangePasswordBody = z
  .object({ currentPassword: z.string().min(1), newPassword: Password, revokeCredentials: RevokeCredentials })
  .meta({ id: 'ChangePassword' });

export const ResetPasswordBody = z
  .object({ token: z.string().min(1).meta({ description: 'The `token` of the reset link.' }), password: Password, revokeCredentials: RevokeCredentials })
  .meta({ id: 'ResetPassword' });

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

export const CreateUserBody = z
  .object({
    email: z.string(),
    name: z.string().nullable().optional(),
    role: z.enum(['admin', 'member']).optional(),
    password: Password.optional().meta({ description: 'Without it the answer carries a reset link to set one.' }),
  })
  .meta({ id: 'CreateUser' });

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

export const DeviceCodeResult = z
  .strictObject({
    code: z
      .string()
      .regex(/^[A-Z0-9]{6}$/)
      .meta({ description: 'Six letters and digits; shown as `ABC-123`.' }),
    expiresAt: Timestamp.meta({ description: 'Ten minutes after it was issued.' }),
  })
  .meta({ id: 'DeviceCode' });
