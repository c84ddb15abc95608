import crypto from 'node:crypto';
import type { PrismaClient } from '../generated/prisma/client';
import { AppError } from '../errors';
import { signKeyToken } from '../auth/tokens';
import type { Ctx } from './context';
import { CreateKeyInput, parseInput } from './inputs';

export interface ApiKeyDto {
  id: string;
  userId: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
}

interface KeyRow {
  id: string;
  userId: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export const toApiKey = (k: KeyRow): ApiKeyDto => ({
  id: k.id,
  userId: k.userId,
  name: k.name,
  createdAt: k.createdAt.toISOString(),
  lastUsedAt: iso(k.lastUsedAt),
  expiresAt: iso(k.expiresAt),
  revokedAt: iso(k.revokedAt),
});

export interface KeyInput {
  name?: unknown;
  expiresInDays?: unknown;
}

/** The body of `POST /keys` (and GraphQL `createApiKey`'s arguments), parsed by its REST schema. */
export function validateKeyInput(input: unknown): { name: string; expiresInDays: number | undefined } {
  const { name, expiresInDays } = parseInput(CreateKeyInput, input);
  return { name, expiresInDays: expiresInDays ?? undefined };
}

/** Creates a key row and returns its token; the token is never stored. */
export async function createKeyForUser(
  prisma: PrismaClient,
  secret: string,
  userId: string,
  name: string,
  expiresInDays?: number,
  /** The key the request was made with: the new key expires no later than it and is revoked with it. */
  parentKeyId?: string,
): Promise<{ key: ApiKeyDto; token: string }> {
  const id = crypto.randomUUID();
  const now = new Date();
  let expiresAt = expiresInDays ? new Date(now.getTime() + expiresInDays * 86_400_000) : null;
  const parent = parentKeyId ? await prisma.apiKey.findUnique({ where: { id: parentKeyId } }) : null;
  if (parent?.expiresAt && (!expiresAt || expiresAt > parent.expiresAt)) expiresAt = parent.expiresAt;
  const row = await prisma.apiKey.create({
    data: { id, userId, name, createdAt: now, expiresAt, parentKeyId: parent ? parent.id : null },
  });
  return { key: toApiKey(row), token: signKeyToken(secret, userId, id, expiresAt) };
}

export async function listKeysOfUser(prisma: PrismaClient, userId: string): Promise<ApiKeyDto[]> {
  const rows = await prisma.apiKey.findMany({ where: { userId }, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }] });
  return rows.map(toApiKey);
}

/** Revokes a key; already revoked keys keep their first revocation time. */
export async function revokeKeyById(prisma: PrismaClient, keyId: string, userId?: string): Promise<ApiKeyDto> {
  const row = await prisma.apiKey.findUnique({ where: { id: keyId } });
  if (!row || (userId !== undefined && row.userId !== userId)) {
    throw new AppError('NOT_FOUND', 'API key not found', { keyId });
  }
  if (row.revokedAt) return toApiKey(row);
  const now = new Date();
  // The key and every key created with it, at any depth (contract §16).
  const ids: string[] = [keyId];
  for (let level = [keyId]; level.length > 0; ) {
    const children = await prisma.apiKey.findMany({ where: { parentKeyId: { in: level } }, select: { id: true } });
    level = children.map((c) => c.id).filter((c) => !ids.includes(c));
    ids.push(...level);
  }
  await prisma.apiKey.updateMany({ where: { id: { in: ids }, revokedAt: null }, data: { revokedAt: now } });
  const updated = await prisma.apiKey.findUniqueOrThrow({ where: { id: keyId } });
  return toApiKey(updated);
}

// The front doors' view: always the caller's own keys.
export const createApiKey = (ctx: Ctx, input: unknown) => {
  const { name, expiresInDays } = validateKeyInput(input);
  return createKeyForUser(ctx.deps.db.prisma, ctx.deps.config.jwtSecret, ctx.user.id, name, expiresInDays, ctx.user.keyId ?? undefined);
};
export const listApiKeys = (ctx: Ctx) => listKeysOfUser(ctx.deps.db.prisma, ctx.user.id);
export const revokeApiKey = (ctx: Ctx, keyId: string) => revokeKeyById(ctx.deps.db.prisma, keyId, ctx.user.id);
