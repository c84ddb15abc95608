import { useRef, useState } from 'react';
import { FormError } from './ui';

/*
 * `/settings/export`: the caller's archive (GET /api/v1/export, docs/export-import.md), read as a
 * stream so the page can say how much has arrived, then saved as a file. The service sends
 * Content-Length, so the progress bar knows the whole size from the first byte.
 */

const FILE_NAME = 'session-archive-export.tar';

const mib = (n: number) => (n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1048576).toFixed(1)} MiB`);

interface Progress {
  received: number;
  total: number | null;
}

async function fetchArchive(onProgress: (p: Progress) => void, signal: AbortSignal): Promise<Blob> {
  const res = await fetch('/api/v1/export', { credentials: 'same-origin', cache: 'no-store', signal });
  if (!res.ok || !res.body) {
    const body = (await res.json().catch(() => null)) as { error?: string } | null;
    throw new Error(body?.error ?? `The export failed (${res.status})`);
  }
  const length = Number(res.headers.get('Content-Length'));
  const total = Number.isFinite(length) && length > 0 ? length : null;
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let received = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    received += value.byteLength;
    onProgress({ received, total });
  }
  return new Blob(chunks, { type: 'application/x-tar' });
}

function save(blob: Blob): void {
  const href = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = href;
  a.download = FILE_NAME;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 60_000);
}

export function ExportPage() {
  const [progress, setProgress] = useState<Progress | null>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const abort = useRef<AbortController | null>(null);

  const start = async () => {
    setBusy(true);
    setError(null);
    setDone(null);
    setProgress({ received: 0, total: null });
    const ctl = new AbortController();
    abort.current = ctl;
    try {
      const blob = await fetchArchive(setProgress, ctl.signal);
      save(blob);
      setDone(`Saved ${FILE_NAME} (${mib(blob.size)}).`);
    } catch (err) {
      setError(ctl.signal.aborted ? 'The export was cancelled.' : err instanceof Error ? err.message : String(err));
    } finally {
      abort.current = null;
      setBusy(false);
    }
  };

  return (
    <>
      <h1>Export</h1>
      <p>
        One tar file with everything you own and the projects of the teams where you are an admin: each session&apos;s markdown, raw data, session data, title,
        tags and metadata, byte for byte. Import it here or on another server (<code>POST /api/v1/import</code>, or <code>npm run cli -- import</code>).
      </p>
      <div className="actions">
        <button type="button" onClick={() => void start()} disabled={busy}>
          Download archive
        </button>
        {busy && (
          <button type="button" onClick={() => abort.current?.abort()}>
            Cancel
          </button>
        )}
      </div>
      {progress && busy && (
        <div className="field">
          <label htmlFor="export-progress">Received</label>
          <progress id="export-progress" value={progress.received} max={progress.total ?? undefined} />
          <p className="muted" role="status">
            {mib(progress.received)}
            {progress.total ? ` of ${mib(progress.total)}` : ''} received
          </p>
        </div>
      )}
      {done && <p role="status">{done}</p>}
      <FormError error={error} />
    </>
  );
}
