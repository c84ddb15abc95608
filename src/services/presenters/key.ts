/** How an API key is shown to clients: REST's `ApiKey` and GraphQL's `ApiKey` are both `presentApiKey`. */
import type { z } from 'zod';
import type { ApiKey } from '../../api/schemas/resources';
import type { KeyRow } from '../../data/api-keys';
import { parseScopes } from '../../domain/scopes';

/** REST's `ApiKey` schema is the type. */
export type ApiKeyDto = z.input<typeof ApiKey>;

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
