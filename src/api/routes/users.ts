/** The admins' Users page: list, create, reset link, disable / enable. */
import { defineRoute } from '../route';
import * as A from '../schemas/accounts';
import * as accountInputs from '../../services/account-inputs';
import { envelope, z } from '../schemas/common';

const userId = z.object({ userId: z.string() });

export const userRoutes = {
  listUsers: defineRoute({
    method: 'get',
    path: '/users',
    tag: 'Users',
    auth: 'key',
    summary: 'Every user (admins)',
    responses: { 200: { description: 'Oldest first.', schema: envelope(A.UserList) } },
    errors: [403],
  }),
  createUser: defineRoute({
    method: 'post',
    path: '/users',
    tag: 'Users',
    auth: 'key',
    summary: 'Create a user (admins)',
    body: accountInputs.UserByAdminInput,
    responses: { 201: { description: 'Created.', schema: envelope(A.CreatedUser) } },
    errors: [403, 409],
  }),
  userResetLink: defineRoute({
    method: 'post',
    path: '/users/{userId}/reset-password',
    tag: 'Users',
    auth: 'key',
    summary: 'A one-time reset link for a user (admins)',
    params: userId,
    responses: { 200: { description: 'Valid one hour, one use.', schema: envelope(A.ResetLink) } },
    errors: [403, 404],
  }),
  disableUser: defineRoute({
    method: 'post',
    path: '/users/{userId}/disable',
    tag: 'Users',
    auth: 'key',
    summary: 'Disable a user (admins)',
    description: 'Their keys, device tokens and browser sessions stop working at once. Disabling yourself → 400.',
    params: userId,
    responses: { 200: { description: 'Disabled.', schema: envelope(A.AdminUserResult) } },
    errors: [403, 404],
  }),
  enableUser: defineRoute({
    method: 'post',
    path: '/users/{userId}/enable',
    tag: 'Users',
    auth: 'key',
    summary: 'Enable a disabled user (admins)',
    params: userId,
    responses: { 200: { description: 'Enabled; their keys and device tokens work again.', schema: envelope(A.AdminUserResult) } },
    errors: [403, 404],
  }),
};
