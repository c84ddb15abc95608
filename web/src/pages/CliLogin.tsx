import { useCallback, useEffect, useRef, useState } from 'react';
import { rest, type Schema } from '../api/rest';
import { UploadTargetField, useTeams } from './UploadTarget';

type DeviceCode = Schema<'DeviceCode'>;

/** `ABC123` → `ABC-123` (the dash is cosmetic; the service compares case-insensitively). */
export function displayCode(code: string): string {
  const c = code.replace(/-/g, '').toUpperCase();
  return c.length === 6 ? `${c.slice(0, 3)}-${c.slice(3)}` : c;
}

/**
 * `/cli-login` (device login): a single-use code, valid 10 minutes, to type into the upload CLI or
 * the desktop app. `Upload new projects to` binds the code (and so the logged-in client) to a
 * team: changing it issues a new code.
 */
export function CliLoginPage() {
  const [code, setCode] = useState<DeviceCode | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [teamId, setTeamId] = useState('');
  const { teams } = useTeams();
  // Only the latest request's code is shown: a code issued for the previous choice never is.
  const latest = useRef(0);
  const issue = useCallback(async (team: string) => {
    const mine = ++latest.current;
    setError(null);
    setCode(null);
    const r = await rest.post('/device-codes', { body: team ? { teamId: team } : {} });
    if (mine !== latest.current) return;
    if (r.ok && r.data) setCode(r.data);
    else setError(r.error ?? 'No code could be issued');
  }, []);
  useEffect(() => {
    void issue(teamId);
  }, [issue, teamId]);
  const teamName = teams?.find((t) => t.id === teamId)?.name;
  return (
    <>
      <h1>Log in a client</h1>
      <p>Type this code into the upload CLI or the desktop app when it asks for it. It works once, for 10 minutes.</p>
      {teams && <UploadTargetField teams={teams} value={teamId} onChange={setTeamId} />}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {code ? (
        <>
          <output className="device-code" aria-label="Device code">
            {displayCode(code.code)}
          </output>
          <p>
            Valid until {new Date(code.expiresAt).toLocaleTimeString()}. New projects of this client go to{' '}
            {teamName ? <strong>{teamName}</strong> : 'your personal projects'}.
          </p>
        </>
      ) : (
        !error && <p role="status">Issuing a code…</p>
      )}
      <button type="button" onClick={() => void issue(teamId)}>
        New code
      </button>
      <p>
        A logged-in client is listed under <a href="/settings/api-keys">API keys</a>, where it can be revoked.
      </p>
    </>
  );
}
