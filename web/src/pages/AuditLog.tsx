import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { rest, type Schema } from '../api/rest';
import { Field, FormError, when } from './ui';

type Entry = Schema<'AuditEntry'>;
interface Filters {
  actor?: string;
  action?: string;
  result?: 'success' | 'failure';
  from?: string;
  to?: string;
}

/** A date field (YYYY-MM-DD) as the start of that day in UTC; the `to` day is included whole. */
const dayStart = (day: string, plusDays = 0) => (day ? new Date(Date.parse(`${day}T00:00:00Z`) + plusDays * 86_400_000).toISOString() : undefined);

/**
 * An actor's label (an email, mostly), breaking after its `@` rather than mid-word: `ada@` over
 * `example.com` (styles.css, `.actor`, keeps the column that wide; a longer part still breaks).
 */
function Actor({ label }: { label: string }) {
  const parts = label.split('@').flatMap((part, i, all) => (i < all.length - 1 ? [`${part}@`, <wbr key={i} />] : [part]));
  return <span className="actor">{parts}</span>;
}

function filtersOf(form: FormData): Filters {
  const text = (name: string) => {
    const raw = form.get(name);
    const v = typeof raw === 'string' ? raw.trim() : '';
    return v || undefined;
  };
  const result = text('result');
  return {
    actor: text('actor'),
    action: text('action'),
    result: result === 'success' || result === 'failure' ? result : undefined,
    from: dayStart(text('from') ?? ''),
    to: dayStart(text('to') ?? '', 1),
  };
}

function exportHref(f: Filters): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(f) as [string, string | undefined][]) if (v) q.set(k, v);
  const s = q.toString();
  return `/api/v1/audit/export${s ? `?${s}` : ''}`;
}

/** `/settings/audit`: the audit log (administrators: every entry; team admins: their teams'), with filters, paging and the JSON-lines export. */
export function AuditLogPage() {
  const [filters, setFilters] = useState<Filters>({});
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Refused (neither an administrator nor a team admin): no filters, no list, only why.
  const [refused, setRefused] = useState(false);

  const load = useCallback(async (f: Filters, after: string | null) => {
    setError(null);
    const r = await rest.get('/audit', { query: { ...f, ...(after ? { cursor: after } : {}) } });
    if (!r.ok || !r.data) {
      setError(r.error ?? 'The audit log could not be read');
      setRefused(r.status === 403);
      if (!after) setEntries([]);
      return;
    }
    const page = r.data;
    setEntries((old) => (after && old ? [...old, ...page.entries] : page.entries));
    setCursor(page.nextCursor);
  }, []);
  useEffect(() => {
    void load({}, null);
  }, [load]);

  const apply = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = filtersOf(new FormData(e.currentTarget));
    setFilters(f);
    setEntries(null);
    void load(f, null);
  };

  const intro = (
    <>
      <h1>Audit log</h1>
      <p>
        Sign-ins, keys, accounts, teams, projects, share links, exports and imports: who did what, from which network. Administrators see every entry, team
        admins their teams’.
      </p>
    </>
  );
  if (refused) {
    return (
      <>
        {intro}
        <FormError error={error} />
      </>
    );
  }
  return (
    <>
      {intro}
      <section className="card" aria-labelledby="audit-filters-title">
        <h2 id="audit-filters-title">Filters</h2>
        <form className="filter-grid" onSubmit={apply}>
          <Field label="Actor" name="actor" hint="An email or user id" />
          <Field label="Action" name="action" hint="For example sign_in, key.create, share.revoke" />
          <div className="field">
            <label htmlFor="audit-result">Result</label>
            <select id="audit-result" name="result" defaultValue="">
              <option value="">Any</option>
              <option value="success">Success</option>
              <option value="failure">Failure</option>
            </select>
          </div>
          <Field label="From (UTC day)" name="from" type="date" />
          <Field label="To (UTC day, included)" name="to" type="date" />
          <button type="submit">Apply filters</button>
        </form>
        <p>
          <a href={exportHref(filters)} download>
            Export these entries (JSON lines)
          </a>
        </p>
      </section>
      <FormError error={error} />
      {entries === null ? (
        <p role="status">Loading the audit log…</p>
      ) : entries.length === 0 ? (
        <p role="status">No entries.</p>
      ) : (
        <table className="stack">
          <caption className="visually-hidden">Audit log entries, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Actor</th>
              <th scope="col">Action</th>
              <th scope="col">Target</th>
              <th scope="col">Result</th>
              <th scope="col">Network</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.id}>
                <th scope="row">{when(e.at)}</th>
                <td data-label="Actor">
                  <Actor label={e.actor.label} />
                </td>
                <td data-label="Action" className="nowrap">
                  {e.action}
                </td>
                <td data-label="Target">{e.target.id ? `${e.target.type} ${e.target.id}` : e.target.type}</td>
                <td data-label="Result" className="nowrap">
                  {e.result}
                </td>
                <td data-label="Network" className="nowrap">
                  {e.ip ?? '—'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {cursor && entries && (
        <button type="button" onClick={() => void load(filters, cursor)}>
          Older entries
        </button>
      )}
    </>
  );
}
