/** Every REST path the console calls, in one place. */
export const ENDPOINTS = {
  session: '/api/v1/auth/session',
  signIn: '/api/v1/auth/sign-in',
  signOut: '/api/v1/auth/sign-out',
  setup: '/api/v1/auth/setup',
  signUp: '/api/v1/auth/sign-up',
  signOutEverywhere: '/api/v1/auth/sign-out-everywhere',
  password: '/api/v1/auth/password',
  resetPassword: '/api/v1/auth/reset-password',
  users: '/api/v1/users',
  deviceCodes: '/api/v1/device-codes',
  invitationLookup: '/api/v1/invitations/lookup',
} as const;
