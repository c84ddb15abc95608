/**
 * How users are shown: the signed-in user's account (`presentAccount`), an admin's view of a user
 * (`presentAdminUser`) and a new user (`presentNewUser`). Teammates see only id and name (GraphQL's `User`).
 */
import type { UserRow } from '../../data/users';
import { roleOf, type Role } from '../../domain/roles';

export interface UserDto {
  id: string;
  email: string;
  name: string | null;
  createdAt: string;
}

/** What the console shows of the signed-in user. */
export interface AccountDto {
  id: string;
  email: string;
  name: string | null;
  role: Role;
}

/** An admin's view of a user (the Users page). */
export interface AdminUserDto extends AccountDto {
  createdAt: string;
  disabledAt: string | null;
}

export const presentAccount = (u: UserRow): AccountDto => ({ id: u.id, email: u.email, name: u.name, role: roleOf(u.role) });

export const presentAdminUser = (u: UserRow): AdminUserDto => ({
  ...presentAccount(u),
  createdAt: u.createdAt.toISOString(),
  disabledAt: u.disabledAt ? u.disabledAt.toISOString() : null,
});

/** A user just created or looked up by the operator. */
export const presentNewUser = (u: UserRow): UserDto & AccountDto => ({ ...presentAccount(u), createdAt: u.createdAt.toISOString() });
