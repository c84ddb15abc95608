/** Browser sessions of the console: sign-in, first run, sign-up, reset links, passwords. */
import { defineRoute } from '../route';
import * as A from '../schemas/accounts';
import * as accountInputs from '../../services/account-inputs';
import { envelope } from '../schemas/common';

export const accountRoutes = {
  browserSession: defineRoute({
    method: 'get',
    path: '/auth/session',
    tag: 'Accounts',
    auth: 'cookie',
    summary: 'The signed-in user and the CSRF token',
    description: 'Only the `sa_session` cookie counts here; 401 without a live browser session.',
    responses: { 200: { description: 'The browser session.', schema: envelope(A.BrowserSession) } },
  }),
  signIn: defineRoute({
    method: 'post',
    path: '/auth/sign-in',
    tag: 'Accounts',
    auth: 'none',
    rateLimit: 'anonymous',
    summary: 'Sign in to the console',
    body: accountInputs.SignInInput,
    description:
      'Unknown email and wrong password get the same 401 `Invalid email or password`. Failed sign-ins count per address and 10 per account per 15 minutes → 429. Successful ones are limited too (`SIGN_INS_PER_ACCOUNT` and `SIGN_INS_PER_ADDRESS`, 30 each per 15 minutes → 429), and a user holds at most `BROWSER_SESSIONS_PER_USER` (100) browser sessions: a new one ends the oldest. Every request counts against the address’s `ANONYMOUS_REQUESTS_PER_MINUTE`.',
    responses: { 200: { description: 'Signed in; the browser session is in the cookie.', schema: envelope(A.SignedIn), headers: ['Set-Cookie'] } },
    errors: [401, 403, 429],
  }),
  signOut: defineRoute({
    method: 'post',
    path: '/auth/sign-out',
    tag: 'Accounts',
    auth: 'none',
    summary: 'End the browser session',
    description: 'With a live `sa_session` cookie the CSRF rule applies (403 `Invalid CSRF token`); without one it just clears the cookie.',
    responses: { 200: { description: 'Signed out.', schema: envelope(A.Empty), headers: ['Set-Cookie'] } },
    errors: [403],
  }),
  setupState: defineRoute({
    method: 'get',
    path: '/auth/setup',
    tag: 'Accounts',
    auth: 'none',
    summary: 'Whether the first account is still to be created',
    responses: { 200: { description: 'First-run and sign-up state.', schema: envelope(A.SetupState) } },
  }),
  setUp: defineRoute({
    method: 'post',
    path: '/auth/setup',
    tag: 'Accounts',
    auth: 'none',
    rateLimit: 'anonymous',
    summary: 'Create the first account (an admin) and sign it in',
    description:
      'Only while no user exists; afterwards 409 at once (before the body is read). Of concurrent attempts one creates the account, the others get 409. A foreign `Origin` → 403. Every request counts against the address’s `ANONYMOUS_REQUESTS_PER_MINUTE` → 429.',
    body: accountInputs.NewAccountInput,
    responses: { 201: { description: 'Created and signed in.', schema: envelope(A.SignedIn), headers: ['Set-Cookie'] } },
    errors: [403, 409, 429],
  }),
  signUp: defineRoute({
    method: 'post',
    path: '/auth/sign-up',
    tag: 'Accounts',
    auth: 'none',
    rateLimit: 'anonymous',
    summary: 'Create a member account and sign it in',
    description:
      'Only with `SIGNUP_ENABLED=true`, else 403 `Sign-up is disabled` — unless the body carries `invitationToken`, an open team invitation: then the account is created (for the invitation’s email when it names one, else 403) and joins the team, in one transaction that spends the invitation first (one link makes one account, however many requests race). An unknown, used, revoked or expired invitation → 404 `Invalid or expired invitation`; one whose creator is no longer an admin of the team → 404 `This invitation was withdrawn: …`. An email in use → 409. Each well-formed attempt counts against the address’s `SIGN_UPS_PER_HOUR` (10) → 429.',
    body: accountInputs.SignUpInput,
    responses: { 201: { description: 'Created and signed in.', schema: envelope(A.SignedIn), headers: ['Set-Cookie'] } },
    errors: [403, 404, 409, 429],
  }),
  resetPassword: defineRoute({
    method: 'post',
    path: '/auth/reset-password',
    tag: 'Accounts',
    auth: 'none',
    rateLimit: 'anonymous',
    summary: 'Set a password through a one-time reset link',
    description:
      '400 `Invalid or expired reset link` for a used, expired or unknown token (counted against the failed-authentication limit). Every browser session of the user ends, and, unless `revokeCredentials` is false, every API key and device token.',
    body: accountInputs.PasswordResetInput,
    responses: { 200: { description: 'Password set.', schema: envelope(A.Empty), headers: ['Set-Cookie'] } },
    errors: [403, 429],
  }),
  changePassword: defineRoute({
    method: 'post',
    path: '/auth/password',
    tag: 'Accounts',
    auth: 'key',
    summary: 'Change your password',
    description:
      '403 `Current password is incorrect`. Every other browser session of the user ends; the one making the change stays. Unless `revokeCredentials` is false, every API key and device token of the user is revoked too (the key making the request included).',
    body: accountInputs.PasswordChangeInput,
    responses: { 200: { description: 'Changed.', schema: envelope(A.Empty) } },
    errors: [403],
  }),
  signOutEverywhere: defineRoute({
    method: 'post',
    path: '/auth/sign-out-everywhere',
    tag: 'Accounts',
    auth: 'key',
    summary: 'End every browser session of yours',
    description: 'API keys and device tokens keep working (revoke them on the keys page).',
    responses: { 200: { description: 'Signed out everywhere.', schema: envelope(A.Empty), headers: ['Set-Cookie'] } },
    errors: [403],
  }),
};
