/**
 * The exact 400 messages of the account and device-login bodies, pinned on the
 * functions both front doors call, in the order the checks run. Written before these inputs moved
 * onto zod schemas (src/services/inputs.ts), so that the move changes no message.
 */
import { credentialsOf, newAccountOf, passwordChangeOf, passwordResetOf, userByAdminOf } from '../../src/services/accounts';
import { deviceLoginInput } from '../../src/services/device';

const messageOf = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    return (err as Error).message;
  }
  return 'accepted';
};

const OBJECT = 'Request body must be a JSON object';
const GOOD = 'correct horse battery';

test.each([
  [[], OBJECT],
  ['x', OBJECT],
  [{}, 'Missing required field: email'],
  [{ email: '', password: GOOD }, 'Missing required field: email'],
  [{ email: null, password: GOOD }, 'Missing required field: email'],
  [{ email: 5, password: GOOD }, 'Invalid value for email. Must be a string'],
  [{ email: 'a@b' }, 'Missing required field: password'],
  [{ email: 'a@b', password: 7 }, 'Invalid value for password. Must be a string'],
  [{ email: 'not-an-email', password: 'short' }, 'accepted'],
])('sign-in %j → %s', (body, message) => {
  expect(messageOf(() => credentialsOf(body))).toBe(message);
});

test.each([
  [null, OBJECT],
  [{}, 'Missing required field: email'],
  [{ email: 3 }, 'Invalid email: 3'],
  [{ email: 'nope' }, 'Invalid email: nope'],
  [{ email: `${'a'.repeat(320)}@b` }, `Invalid email: ${'a'.repeat(320)}`],
  [{ email: 'a@b', name: 4, password: GOOD }, 'Invalid value for name. Must be a string of at most 255 characters'],
  [{ email: 'a@b', name: '😀'.repeat(256), password: GOOD }, 'Invalid value for name. Must be a string of at most 255 characters'],
  [{ email: 'a@b', name: '😀'.repeat(255), password: GOOD }, 'accepted'],
  [{ email: 'a@b', name: '' }, 'Missing required field: password'],
  [{ email: 'a@b', password: '' }, 'Missing required field: password'],
  [{ email: 'a@b', password: 12 }, 'Invalid value for password. Must be a string'],
  [{ email: 'a@b', password: 'short' }, 'Invalid value for password. Must be 10 to 256 characters'],
  [{ email: 'a@b', password: 'x'.repeat(257) }, 'Invalid value for password. Must be 10 to 256 characters'],
])('new account %j → %s', (body, message) => {
  expect(messageOf(() => newAccountOf(body))).toBe(message);
});

test('new account: an empty name is no name', () => {
  expect(newAccountOf({ email: 'a@b', name: '', password: GOOD })).toEqual({ email: 'a@b', name: null, password: GOOD });
});

test.each([
  [{ email: 'a@b', role: 'owner' }, 'Invalid value for role. Must be one of: admin, member'],
  [{ email: 'nope', role: 'owner' }, 'Invalid email: nope'],
  [{ email: 'a@b', role: null }, 'accepted'],
  [{ email: 'a@b' }, 'accepted'],
  [{ email: 'a@b', password: null }, 'accepted'],
  [{ email: 'a@b', password: '' }, 'Missing required field: password'],
  [{ email: 'a@b', password: 'short', role: 'owner' }, 'Invalid value for password. Must be 10 to 256 characters'],
])('a user added by an admin %j → %s', (body, message) => {
  expect(messageOf(() => userByAdminOf(body))).toBe(message);
});

test('revokeCredentials: absent and null mean true; false is kept', () => {
  expect(passwordChangeOf({ currentPassword: 'old', newPassword: GOOD }).revokeCredentials).toBe(true);
  expect(passwordChangeOf({ currentPassword: 'old', newPassword: GOOD, revokeCredentials: null }).revokeCredentials).toBe(true);
  expect(passwordChangeOf({ currentPassword: 'old', newPassword: GOOD, revokeCredentials: false }).revokeCredentials).toBe(false);
  expect(passwordResetOf({ token: 't', password: GOOD }).revokeCredentials).toBe(true);
  expect(passwordResetOf({ token: 't', password: GOOD, revokeCredentials: false }).revokeCredentials).toBe(false);
});

test('a user added by an admin: member unless admin', () => {
  expect(userByAdminOf({ email: 'a@b' }).role).toBe('member');
  expect(userByAdminOf({ email: 'a@b', role: 'admin' }).role).toBe('admin');
});

test.each([
  [[], OBJECT],
  [{ newPassword: GOOD }, 'Missing required field: currentPassword'],
  [{ currentPassword: '', newPassword: GOOD }, 'Missing required field: currentPassword'],
  [{ currentPassword: 1, newPassword: GOOD }, 'Missing required field: currentPassword'],
  [{ currentPassword: 'old' }, 'Missing required field: newPassword'],
  [{ currentPassword: 'old', newPassword: 1 }, 'Invalid value for newPassword. Must be a string'],
  [{ currentPassword: 'old', newPassword: 'short' }, 'Invalid value for newPassword. Must be 10 to 256 characters'],
  [{ currentPassword: 'old', newPassword: GOOD }, 'accepted'],
  [{ currentPassword: 'old', newPassword: GOOD, revokeCredentials: 'no' }, 'Invalid value for revokeCredentials. Must be a boolean'],
  [{ currentPassword: 'old', newPassword: GOOD, revokeCredentials: 0 }, 'Invalid value for revokeCredentials. Must be a boolean'],
  [{ currentPassword: 'old', newPassword: GOOD, revokeCredentials: null }, 'accepted'],
])('password change %j → %s', (body, message) => {
  expect(messageOf(() => passwordChangeOf(body))).toBe(message);
});

test.each([
  ['x', OBJECT],
  [{ password: GOOD }, 'Missing required field: token'],
  [{ token: 5, password: GOOD }, 'Missing required field: token'],
  [{ token: 't' }, 'Missing required field: password'],
  [{ token: 't', password: 'short' }, 'Invalid value for password. Must be 10 to 256 characters'],
  [{ token: 't', password: GOOD }, 'accepted'],
  [{ token: 't', password: GOOD, revokeCredentials: 'true' }, 'Invalid value for revokeCredentials. Must be a boolean'],
  [{ token: 't', password: GOOD, revokeCredentials: false }, 'accepted'],
])('password reset %j → %s', (body, message) => {
  expect(messageOf(() => passwordResetOf(body))).toBe(message);
});

test.each([
  [[], 'Missing required field: device_code'],
  [{}, 'Missing required field: device_code'],
  [{ device_code: '' }, 'Missing required field: device_code'],
  [{ device_code: 5 }, 'Invalid value for device_code. Must be a string'],
  [{ device_code: 'ABC', hostname: 5 }, 'Invalid value for hostname. Must be a string of at most 255 characters'],
  [{ device_code: 'ABC', os: 'x'.repeat(256) }, 'Invalid value for os. Must be a string of at most 255 characters'],
  [{ device_code: 'ABC', client: 'x'.repeat(255), hostname: null }, 'accepted'],
])('device login %j → %s', (body, message) => {
  expect(messageOf(() => deviceLoginInput(body))).toBe(message);
});

test('device login keeps the metadata it knows', () => {
  expect(deviceLoginInput({ device_code: 'ABC', hostname: 'h', other: 'x' })).toEqual({ code: 'ABC', meta: { hostname: 'h' } });
});
