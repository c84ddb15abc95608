/**
 * The OAuth clients of MCP connectors: registered at /oauth/register (RFC 7591; capped in number,
 * removed after 30 days unused) or named by the https URL of their metadata document (fetched by
 * ./client-metadata.ts). Every client is public: no secret is issued or kept, PKCE is what proves
 * that the one redeeming a code is the one that asked for it.
 */
import crypto from 'node:crypto';
import { InvalidClientError, InvalidClientMetadataError, TooManyRequestsError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { OAuthClientMetadataSchema, type OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import * as store from '../data/oauth';
import type { PublicCtx } from './context';
import { fetchClientMetadata, metadataUrlOf, MetadataFetchError } from './client-metadata';

const UNUSED_MS = 30 * 86_400_000;
/** lastUsedAt is written at most this often (it only decides the 30-day removal). */
const TOUCH_MS = 86_400_000;
const NAME_MAX = 100;

/** The name a person is shown: the client's own (hostile text: the page escapes it), else the host of its first redirect. */
function displayName(meta: { client_name?: string; redirect_uris: string[] }): string {
  const name = meta.client_name?.trim();
  if (name) return name.slice(0, NAME_MAX);
  try {
    return new URL(meta.redirect_uris[0]).host.slice(0, NAME_MAX) || 'Unnamed client';
  } catch {
    return 'Unnamed client';
  }
}

function parseMetadata(input: unknown) {
  const parsed = OAuthClientMetadataSchema.safeParse(input);
  if (!parsed.success) throw new InvalidClientMetadataError(parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
  const meta = parsed.data;
  if (meta.redirect_uris.length === 0 || meta.redirect_uris.length > 10) throw new InvalidClientMetadataError('redirect_uris: one to ten URLs');
  if (meta.redirect_uris.some((u) => u.length > 2000)) throw new InvalidClientMetadataError('redirect_uris: at most 2000 characters each');
  if (meta.grant_types && meta.grant_types.some((g) => g !== 'authorization_code' && g !== 'refresh_token')) {
    throw new InvalidClientMetadataError('grant_types: only authorization_code and refresh_token are supported');
  }
  return meta;
}

/**
 * Registers a client (the caller's address has already paid for it). Clients unused for 30 days
 * are removed first; past OAUTH_CLIENTS_MAX a registration is refused until some are.
 */
export async function registerClient(ctx: PublicCtx, input: unknown): Promise<OAuthClientInformationFull> {
  const meta = parseMetadata(input);
  const db = ctx.deps.db.writes;
  const now = new Date();
  await store.deleteClientsUnusedSince(db, new Date(now.getTime() - UNUSED_MS));
  if ((await store.countClients(db)) >= ctx.deps.config.oauth.clientsMax) {
    throw new TooManyRequestsError('This server holds as many client registrations as it accepts; try again later');
  }
  const client: OAuthClientInformationFull = {
    ...meta,
    client_name: displayName(meta),
    // Public clients only (see above): whatever method was asked for, none is what the token endpoint takes.
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    client_id: crypto.randomUUID(),
    client_id_issued_at: Math.floor(now.getTime() / 1000),
  };
  await store.insertClient(db, { id: client.client_id, name: client.client_name!, metadata: JSON.stringify(client) }, now);
  return client;
}

/** A client by its id (registered, or the URL of its metadata document); null when there is none. */
export async function findClient(ctx: PublicCtx, clientId: string): Promise<OAuthClientInformationFull | null> {
  const { config } = ctx.deps;
  if (/^https?:/i.test(clientId)) {
    const url = metadataUrlOf(clientId, config.oauth.clientHosts);
    if (!url) throw new InvalidClientError('A client id that is a URL must be an https URL with a path');
    let doc: unknown;
    try {
      doc = await fetchClientMetadata(url, config.oauth.clientHosts);
    } catch (err) {
      if (err instanceof MetadataFetchError) throw new InvalidClientError(err.message);
      throw err;
    }
    const meta = parseMetadata(doc);
    if ((doc as { client_id?: unknown }).client_id !== clientId) throw new InvalidClientError('The client metadata document names another client_id');
    return { ...meta, client_id: clientId, client_name: displayName(meta), token_endpoint_auth_method: 'none' };
  }
  if (!/^[0-9a-f-]{36}$/.test(clientId)) return null;
  const db = ctx.deps.db.writes;
  const row = await store.clientById(db, clientId);
  if (!row) return null;
  const now = new Date();
  if (now.getTime() - row.lastUsedAt.getTime() > TOUCH_MS) await store.touchClient(db, clientId, now);
  return JSON.parse(row.metadata) as OAuthClientInformationFull;
}
