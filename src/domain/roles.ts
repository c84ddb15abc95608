/** A user's role on the whole service (users.role): "admin" or "member"; anything else reads as member. */
export type Role = 'admin' | 'member';

export const roleOf = (role: string): Role => (role === 'admin' ? 'admin' : 'member');
