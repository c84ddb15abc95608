import crypto from 'node:crypto';
import type { PrismaClient } from '../generated/prisma/client';
import { AppError, invalid } from '../errors';

export interface UserDto {
  id: string;
  email: string;
  name: string | null;
  createdAt: string;
}

const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;

export async function createUser(prisma: PrismaClient, email: string, name?: string): Promise<UserDto> {
  if (!EMAIL_RE.test(email) || email.length > 320) throw invalid(`Invalid email: ${email}`);
  const existing = await prisma.user.findUnique({ where: { email } });
  if (existing) throw new AppError('CONFLICT', `A user with email ${email} already exists`);
  const row = await prisma.user.create({ data: { id: crypto.randomUUID(), email, name: name ?? null } });
  return { id: row.id, email: row.email, name: row.name, createdAt: row.createdAt.toISOString() };
}

export async function findUserByEmail(prisma: PrismaClient, email: string): Promise<UserDto | null> {
  const row = await prisma.user.findUnique({ where: { email } });
  return row && { id: row.id, email: row.email, name: row.name, createdAt: row.createdAt.toISOString() };
}
