/**
 * The account and device-login bodies as zod schemas, read through the one
 * translation of src/services/inputs.ts (`parseInput`: the first problem, in the order the schema
 * lists the fields, is the 400). Their messages are those the console and the upload CLI have
 * always shown (pinned in test/accounts/account-input-messages.test.ts), which differ in wording from the
 * session and project fields' (`Invalid value for x. Must be a string`).
 */
import { PASSWORD_MAX, PASSWORD_MIN } from '../domain/passwords';
import { sentText } from '../domain/text';
import { body } from '../domain/inputs';
import { z } from 'zod';
import { EMAIL_RE } from './users';

const missing = (field: string) => `Missing required field: ${field}`;
const codePoints = (s: string) => [...s].length;

/** A required string: absent, null or empty → missing; anything else not a string → its type. */
function requiredString(field: string) {
  return z.string({ error: (iss) => (iss.input == null ? missing(field) : `Invalid value for ${field}. Must be a string`) }).min(1, missing(field));
}

/** A required string where anything but a non-empty string reads as missing. */
const secretText = (field: string) => z.string({ error: missing(field) }).min(1, missing(field));

/** A new password: required, 10–256 code points. */
function newPassword(field = 'password') {
  const length = `Invalid value for ${field}. Must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`;
  return requiredString(field)
    .check((ctx) => {
      const n = codePoints(ctx.value);
      if (ctx.value !== '' && (n < PASSWORD_MIN || n > PASSWORD_MAX)) ctx.issues.push({ code: 'custom', input: ctx.value, message: length });
    })
    .meta({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX, description: `${PASSWORD_MIN}–${PASSWORD_MAX} characters.` });
}

/** An email address: required; otherwise `Invalid email: <what was sent>`. */
const email = z.string({ error: (iss) => (iss.input == null ? missing('email') : `Invalid email: ${sentText(iss.input).slice(0, 320)}`) }).check((ctx) => {
  const v = ctx.value;
  if (v === '') ctx.issues.push({ code: 'custom', input: v, message: missing('email') });
  else if (!EMAIL_RE.test(v) || v.length > 320) ctx.issues.push({ code: 'custom', input: v, message: `Invalid email: ${v.slice(0, 320)}` });
});

const NAME = 'Invalid value for name. Must be a string of at most 255 characters';
/** An optional display name; absent, null and empty are no name. */
const accountName = z
  .string({ error: NAME })
  .check((ctx) => {
    if (codePoints(ctx.value) > 255) ctx.issues.push({ code: 'custom', input: ctx.value, message: NAME });
  })
  .nullish()
  .transform((v) => v || null);

/** Sign-in: both fields present strings (their shape is not checked: a wrong one just fails). */
export const SignInInput = body({ email: requiredString('email'), password: requiredString('password') }).meta({ id: 'SignIn' });

const accountShape = { email, name: accountName };

/** Setup and sign-up: a new account with its password. */
export const NewAccountInput = body({ ...accountShape, password: newPassword() }).meta({ id: 'NewAccount' });

/**
 * A sign-up's `invitationToken`: read on its own, before the account fields (an invitation lets
 * its holder sign up with sign-up off). Anything but a string of 1–200 characters is no invitation.
 */
export const InvitationToken = z
  .unknown()
  .transform((t) => (typeof t === 'string' && t.length > 0 && t.length <= 200 ? t : null))
  .meta({ type: 'string', description: 'An open team invitation: the account joins its team (and may be created with sign-up disabled).' });

// An intersection, not `.extend()`: the document then refers to NewAccount (allOf) instead of repeating it.
export const SignUpInput = z.intersection(NewAccountInput, z.object({ invitationToken: InvitationToken.optional() })).meta({ id: 'SignUp' });

/** A user an admin adds: a new account whose password is optional (without one the user gets a reset link), and its role, member unless `admin`. */
export const UserByAdminInput = body({
  ...accountShape,
  password: newPassword()
    .meta({ description: 'Without it the answer carries a reset link to set one.' })
    .nullish()
    .transform((v) => v ?? undefined),
  role: z
    .enum(['admin', 'member'], { error: 'Invalid value for role. Must be one of: admin, member' })
    .nullish()
    .transform((v) => v ?? 'member'),
}).meta({ id: 'CreateUser' });

/**
 * `revokeCredentials` of a password change or reset: also revoke the user's API keys and device
 * tokens (the default; absent and null mean true), or keep them (`false`).
 */
const revokeCredentials = z
  .boolean({ error: 'Invalid value for revokeCredentials. Must be a boolean' })
  .nullish()
  .transform((v) => v ?? true)
  .meta({
    description: 'Also revoke every API key and device token of the user (and what was created with them). Absent or null: true; false keeps them.',
    default: true,
  });

export const PasswordChangeInput = body({ currentPassword: secretText('currentPassword'), newPassword: newPassword('newPassword'), revokeCredentials }).meta({
  id: 'ChangePassword',
});

export const PasswordResetInput = body({
  token: secretText('token').meta({ description: 'The `token` of the reset link.' }),
  password: newPassword(),
  revokeCredentials,
}).meta({ id: 'ResetPassword' });

const DEVICE_METADATA = ['hostname', 'os', 'os_version', 'os_display_name', 'architecture', 'username', 'client', 'client_version'] as const;
export type DeviceMetadata = Partial<Record<(typeof DEVICE_METADATA)[number], string>>;

const metadataField = (field: string) => {
  const message = `Invalid value for ${field}. Must be a string of at most 255 characters`;
  return z.string({ error: message }).max(255, message).nullish();
};

/** The upload CLI's device login: the code, and what it says about the machine (optional strings). */
export const DeviceLoginInput = z
  .object(
    {
      device_code: requiredString('device_code').meta({ description: 'The code shown on /cli-login (`ABC-123`; the dash is cosmetic, case-insensitive).' }),
      ...Object.fromEntries(DEVICE_METADATA.map((f) => [f, metadataField(f)])),
    },
    { error: missing('device_code') },
  )
  .transform((b) => {
    const meta: DeviceMetadata = {};
    for (const f of DEVICE_METADATA) {
      const v = (b as Record<string, unknown>)[f];
      if (typeof v === 'string') meta[f] = v;
    }
    return { code: b.device_code, meta };
  })
  .meta({ id: 'DeviceLogin' });
