import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { gql } from '../api/graphql';
import { graphql } from '../gql';
import type { ApiKeysQuery } from '../gql/graphql';
import { UploadTargetField, useTeams, type UploadTeam } from './UploadTarget';
import { ConfirmDialog, CopyOnce, errorText, Field, FormError, formText, when } from './ui';

const ApiKeysDocument = graphql(`
  query ApiKeys {
    apiKeys {
      id
      name
      createdAt
      lastUsedAt
      expiresAt
      revokedAt
      scopes
      teamId
    }
  }
`);

const CreateApiKeyDocument = graphql(`
  mutation CreateApiKey($name: String!, $expiresInDays: Int, $scopes: [String!], $teamId: ID) {
    createApiKey(name: $name, expiresInDays: $expiresInDays, scopes: $scopes, teamId: $teamId) {
      key {
        id
        name
      }
      token
    }
  }
`);

const RevokeApiKeyDocument = graphql(`
  mutation RevokeApiKey($id: ID!) {
    revokeApiKey(id: $id) {
      id
      revokedAt
    }
  }
`);

type Key = ApiKeysQuery['apiKeys'][number];

/** `/settings/api-keys`: list, create with the token shown once and Copy, revoke after confirming. */
export function ApiKeysPage() {
  const [keys, setKeys] = useState<Key[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const [revoking, setRevoking] = useState<Key | null>(null);
  const { teams } = useTeams();
  /** Where a key's new projects go: Personal, or its team's name. */
  const target = (k: Key) => (k.teamId ? (teams?.find((t) => t.id === k.teamId)?.name ?? 'A team you left') : 'Personal');

  const load = useCallback(async () => {
    try {
      setKeys((await gql(ApiKeysDocument)).apiKeys);
    } catch (err) {
      setError(errorText(err));
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const revoke = async (key: Key) => {
    setRevoking(null);
    try {
      await gql(RevokeApiKeyDocument, { id: key.id });
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  };

  return (
    <>
      <h1>API keys</h1>
      <p>
        A key authenticates the upload CLI, the SDKs and your scripts (<code>Authorization: Bearer …</code>). Clients logged in through{' '}
        <a href="/cli-login">Log in a client</a> appear here too. Give coding agents (the archive&apos;s MCP endpoint, <code>/mcp</code>) a read-only key: it
        can search and read, never change or delete.
      </p>
      <ConnectAssistant />
      <FormError error={error} />
      {created && <NewKey name={created.name} token={created.token} onDone={() => setCreated(null)} />}
      {creating ? (
        <CreateKeyForm
          teams={teams ?? []}
          onCancel={() => setCreating(false)}
          onCreated={(name, token) => {
            setCreating(false);
            setCreated({ name, token });
            void load();
          }}
        />
      ) : (
        <button type="button" onClick={() => setCreating(true)}>
          Create key
        </button>
      )}
      {keys === null ? (
        <p role="status">Loading keys…</p>
      ) : keys.length === 0 ? (
        <p>No keys yet.</p>
      ) : (
        <table className="stack">
          <caption className="visually-hidden">Your API keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Expires</th>
              <th scope="col">Revoked</th>
              <th scope="col">Access</th>
              <th scope="col">New projects go to</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.id}>
                <th scope="row">{k.name}</th>
                <td data-label="Created">{when(k.createdAt)}</td>
                <td data-label="Last used">{k.lastUsedAt ? when(k.lastUsedAt) : 'Never'}</td>
                <td data-label="Expires">{k.expiresAt ? when(k.expiresAt) : 'Never'}</td>
                <td data-label="Revoked">{k.revokedAt ? when(k.revokedAt) : '—'}</td>
                <td data-label="Access">{k.scopes.includes('write') ? 'Read and write' : 'Read-only'}</td>
                <td data-label="New projects go to">{target(k)}</td>
                <td>
                  {!k.revokedAt && (
                    <button type="button" className="danger" aria-label={`Revoke ${k.name}`} onClick={() => setRevoking(k)}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {revoking && (
        <ConfirmDialog title={`Revoke ${revoking.name}?`} confirmLabel="Revoke key" onCancel={() => setRevoking(null)} onConfirm={() => void revoke(revoking)}>
          <p>Every client using this key is refused from its next request on. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </>
  );
}

function CreateKeyForm({ teams, onCreated, onCancel }: { teams: UploadTeam[]; onCreated: (name: string, token: string) => void; onCancel: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [teamId, setTeamId] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const name = formText(form, 'name');
    const days = formText(form, 'expiresInDays');
    const scopes = form.get('readOnly') ? ['read'] : ['read', 'write'];
    setBusy(true);
    try {
      const r = await gql(CreateApiKeyDocument, { name, expiresInDays: days === '' ? null : Number(days), scopes, teamId: teamId || null });
      onCreated(r.createApiKey.key.name, r.createApiKey.token);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={(e) => void submit(e)} className="card" aria-label="New key">
      <Field label="Key name" name="name" required maxLength={100} autoFocus />
      <Field label="Expires in days" name="expiresInDays" type="number" min={1} max={3650} hint="Optional; without it the key never expires." />
      <div className="field checkbox">
        <input id="new-key-read-only" type="checkbox" name="readOnly" aria-describedby="new-key-read-only-hint" />
        <label htmlFor="new-key-read-only">Read-only (for agents)</label>
        <p id="new-key-read-only-hint" className="hint">
          Searches and reads only; every change made with it is refused.
        </p>
      </div>
      <UploadTargetField teams={teams} value={teamId} onChange={setTeamId} />
      <FormError error={error} />
      <div className="actions">
        <button type="submit" disabled={busy}>
          Create key
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The token, shown once: it is not stored and cannot be shown again. */
function NewKey({ name, token, onDone }: { name: string; token: string; onDone: () => void }) {
  return (
    <section className="card new-key" aria-labelledby="new-key-title">
      <h2 id="new-key-title">Key “{name}” created</h2>
      <p>Copy it now: it is shown only once.</p>
      <CopyOnce label="New API key" value={token} what="key" />
      <button type="button" onClick={onDone}>
        Done
      </button>
    </section>
  );
}

/**
 * Connectors that sign in (claude.ai, Claude Desktop, ChatGPT) need only the endpoint's URL: they
 * register, send the person to a consent page, and then appear in the list above as
 * `<client> (connector)`, revocable like a key.
 */
function ConnectAssistant() {
  const url = `${window.location.origin}/mcp`;
  return (
    <details className="connect-assistant">
      <summary>Connect an assistant</summary>
      <p>
        In claude.ai, Claude Desktop or ChatGPT, add a custom connector with this URL, then sign in and allow it when asked. It appears below as{' '}
        <em>name (connector)</em>, read-only unless you allow more, and you can revoke it here like a key.
      </p>
      <p>
        <label>
          MCP server URL <input type="text" readOnly value={url} onFocus={(e) => e.currentTarget.select()} size={Math.min(60, url.length + 2)} />
        </label>
      </p>
      <p>Coding agents that take a key (Claude Code, Cursor, Codex) use the same URL with a read-only key: see the documentation&apos;s MCP page.</p>
    </details>
  );
}
