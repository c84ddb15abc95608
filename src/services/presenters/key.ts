/** How an API key is shown to clients: REST's `ApiKey` and GraphQL's `ApiKey` are both `presentApiKey`. */
import type { KeyRow } from '../../data/api-keys';
import { parseScopes, type KeyScope } from '../../domain/scopes';

export interface ApiKeyDto {
  id: string;
  userId: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  scopes: KeyScope[];
  /** The team that owns projects created through this key (null: the user's own). */
  teamId: string | null;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export const presentApiKey = (k: KeyRow): ApiKeyDto => ({
  id: k.id,
  userId: k.userId,
  name: k.name,
  createdAt: k.createdAt.toISOString(),
  lastUsedAt: iso(k.lastUsedAt),
  expiresAt: iso(k.expiresAt),
  revokedAt: iso(k.revokedAt),
  scopes: parseScopes(k.scopes),
  teamId: k.teamId ?? null,
});
