/** The admins' Users page: list, create, reset link, disable / enable, delete. */
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
  deleteUser: defineRoute({
    method: 'delete',
    path: '/users/{userId}',
    tag: 'Users',
    auth: 'key',
    summary: 'Delete a user with their own projects (admins)',
    description:
      'Deletes the user, their own projects with every session and its content (as deleting each project does), their keys, device tokens, connector grants, browser sessions, webhooks and the share links they made, and their team memberships; team projects stay with their teams. Nothing is deleted when it is refused: 409 for deleting yourself, the last administrator, the last admin of a team (the message names the team), or `Project is on legal hold` when one of their projects is held.',
    params: userId,
    responses: { 200: { description: 'Deleted; what went with them.', schema: envelope(A.DeletedUser) } },
    errors: [403, 404, 409],
  }),
};
