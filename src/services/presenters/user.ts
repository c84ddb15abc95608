/**
 * How users are shown: the signed-in user's account (`presentAccount`), an admin's view of a user
 * (`presentAdminUser`) and a new user (`presentNewUser`). Teammates see only id and name (GraphQL's `User`).
 */
import type { z } from 'zod';
import type { AdminUser, User } from '../../api/schemas/accounts';
import type { UserRow } from '../../data/users';
import { roleOf } from '../../domain/roles';

/** What the console shows of the signed-in user: REST's `User`. */
export type AccountDto = z.input<typeof User>;

/** An admin's view of a user (the Users page): REST's `AdminUser`. */
export type AdminUserDto = z.input<typeof AdminUser>;

/** A user just created or looked up by the operator: an admin's view without `disabledAt`. */
export type UserDto = Omit<AdminUserDto, 'disabledAt'>;

export const presentAccount = (u: UserRow): AccountDto => ({ id: u.id, email: u.email, name: u.name, role: roleOf(u.role) });

export const presentAdminUser = (u: UserRow): AdminUserDto => ({
  ...presentAccount(u),
  createdAt: u.createdAt.toISOString(),
  disabledAt: u.disabledAt ? u.disabledAt.toISOString() : null,
});

/** A user just created or looked up by the operator. */
export const presentNewUser = (u: UserRow): UserDto & AccountDto => ({ ...presentAccount(u), createdAt: u.createdAt.toISOString() });
