import { useCallback, useEffect, useState } from 'react';
import { ENDPOINTS } from '../api/endpoints';
import { api } from '../api/http';

interface DeviceCode {
  code: string;
  expiresAt: string;
}

/** `ABC123` → `ABC-123` (the dash is cosmetic; the service compares case-insensitively). */
export function displayCode(code: string): string {
  const c = code.replace(/-/g, '').toUpperCase();
  return c.length === 6 ? `${c.slice(0, 3)}-${c.slice(3)}` : c;
}

/** `/cli-login` (device login): a single-use code, valid 10 minutes, to type into the upload CLI or the desktop app. */
export function CliLoginPage() {
  const [code, setCode] = useState<DeviceCode | null>(null);
  const [error, setError] = useState<string | null>(null);
  const issue = useCallback(async () => {
    setError(null);
    const r = await api<DeviceCode>('POST', ENDPOINTS.deviceCodes, {});
    if (r.ok && r.data) setCode(r.data);
    else setError(r.error ?? 'No code could be issued');
  }, []);
  useEffect(() => {
    void issue();
  }, [issue]);
  return (
    <>
      <h1>Log in a client</h1>
      <p>Type this code into the upload CLI or the desktop app when it asks for it. It works once, for 10 minutes.</p>
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
          <p>Valid until {new Date(code.expiresAt).toLocaleTimeString()}.</p>
        </>
      ) : (
        !error && <p role="status">Issuing a code…</p>
      )}
      <button type="button" onClick={() => void issue()}>
        New code
      </button>
      <p>
        A logged-in client is listed under <a href="/settings/api-keys">API keys</a>, where it can be revoked.
      </p>
    </>
  );
}
