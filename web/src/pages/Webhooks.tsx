import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { rest, type Schema } from '../api/rest';
import { useFrame } from '../Layout';
import { ConfirmDialog, CopyOnce, FormError, formText, when } from './ui';

type Webhook = Schema<'Webhook'>;
type Delivery = Schema<'WebhookDelivery'>;
type EventType = Webhook['events'][number];

const EVENTS: readonly EventType[] = [
  'session.created',
  'session.updated',
  'session.deleted',
  'share.created',
  'share.revoked',
  'project.moved',
  'member.added',
  'member.removed',
];

type Project = Schema<'Project'>;
type Team = Schema<'Team'>;

/** What a webhook covers, in words (a project or team by its name while the page knows it). */
const scopeOf = (w: Webhook, projects: Project[], teams: Team[]) =>
  w.projectId
    ? `project ${projects.find((p) => p.id === w.projectId)?.name ?? w.projectId}`
    : w.teamId
      ? `team ${teams.find((t) => t.id === w.teamId)?.name ?? w.teamId}`
      : 'your projects';

/** From this many projects on, the form offers a box that narrows the project list. */
const PROJECTS_BEFORE_FILTER = 12;

/** A project as the scope select names it: its name, and its id when that differs. */
const projectLabel = (p: Project) => (p.name === p.id ? p.name : `${p.name} (${p.id})`);

/** The scope select's value as the API's fields: `project:<id>`, `team:<id>`, or empty (your own projects). */
function scopeFields(value: string): { projectId?: string; teamId?: string } {
  if (value.startsWith('project:')) return { projectId: value.slice('project:'.length) };
  if (value.startsWith('team:')) return { teamId: value.slice('team:'.length) };
  return {};
}

/** One webhook's last 100 deliveries, each with Resend. */
function Deliveries({ webhook }: { webhook: Webhook }) {
  const [list, setList] = useState<Delivery[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    const r = await rest.get('/webhooks/{webhookId}/deliveries', { params: { webhookId: webhook.id } });
    if (r.ok && r.data) setList(r.data.deliveries);
    else setError(r.error ?? 'The deliveries could not be read');
  }, [webhook.id]);
  useEffect(() => {
    void load();
  }, [load]);
  const resend = async (d: Delivery) => {
    setError(null);
    const r = await rest.post('/webhooks/{webhookId}/deliveries/{deliveryId}/resend', { params: { webhookId: webhook.id, deliveryId: d.id } });
    if (!r.ok) setError(r.error ?? 'The delivery could not be sent again');
    await load();
  };
  if (list === null) return <p role="status">{error ?? 'Loading the deliveries…'}</p>;
  return (
    <>
      <FormError error={error} />
      {list.length === 0 ? (
        <p>No deliveries yet.</p>
      ) : (
        <table className="stack">
          <caption>Last deliveries of {webhook.url}, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Answer</th>
              <th scope="col">Time</th>
              <th scope="col">Duration</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((d) => (
              <tr key={d.id}>
                <th scope="row">{d.type}</th>
                <td data-label="Status">{d.status}</td>
                <td data-label="Answer">{d.responseStatus ?? d.error ?? '—'}</td>
                <td data-label="Time">{when(d.attemptedAt ?? d.createdAt)}</td>
                <td data-label="Duration">{d.durationMs == null ? '—' : `${d.durationMs} ms`}</td>
                <td>
                  <button type="button" onClick={() => void resend(d)} disabled={webhook.disabled}>
                    Resend
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

/**
 * `/settings/webhooks`: the caller's webhooks (Standard Webhooks), a form to make one (its secret
 * shown once), each one's deliveries, and Delete (after confirming).
 */
export function WebhooksPage() {
  const [hooks, setHooks] = useState<Webhook[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<{ url: string; secret: string } | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<Webhook | null>(null);
  // What a webhook can cover: the projects the caller reads, and the teams they are an admin of.
  const [projects, setProjects] = useState<Project[]>([]);
  // The frame's read of the user's teams, made again on opening the page: a team made or an admin
  // role given elsewhere since the console loaded is offered.
  const { teams, reloadTeams } = useFrame();
  useEffect(() => {
    void reloadTeams();
  }, [reloadTeams]);
  useEffect(() => {
    let live = true;
    void rest.get('/projects').then((r) => live && r.data && setProjects(r.data.projects));
    return () => {
      live = false;
    };
  }, []);
  const adminOf = teams.filter((t) => t.role === 'admin');
  // The scope picked, and the words narrowing the project list (the picked one always stays listed).
  const [scope, setScope] = useState('');
  const [projectFilter, setProjectFilter] = useState('');
  const needle = projectFilter.trim().toLowerCase();
  const listed = needle ? projects.filter((p) => `project:${p.id}` === scope || projectLabel(p).toLowerCase().includes(needle)) : projects;

  const load = useCallback(async () => {
    const r = await rest.get('/webhooks');
    if (r.ok && r.data) setHooks(r.data.webhooks);
    else setError(r.error ?? 'The webhooks could not be listed');
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const create = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    setError(null);
    const formElement = e.currentTarget;
    const form = new FormData(formElement);
    const events = EVENTS.filter((t) => form.get(`event-${t}`) === 'on');
    const r = await rest.post('/webhooks', { body: { url: formText(form, 'url'), events, ...scopeFields(formText(form, 'scope')) } });
    if (!r.ok || !r.data) return setError(r.error ?? 'The webhook could not be made');
    setCreated({ url: r.data.webhook.url, secret: r.data.secret });
    formElement.reset();
    setScope('');
    setProjectFilter('');
    await load();
  };

  const remove = async (w: Webhook) => {
    setDeleting(null);
    setError(null);
    const r = await rest.delete('/webhooks/{webhookId}', { params: { webhookId: w.id } });
    if (!r.ok) setError(r.error ?? 'The webhook could not be deleted');
    await load();
  };

  return (
    <>
      <h1>Webhooks</h1>
      <p>
        The archive POSTs an event to your URL when sessions, share links, projects or team members change, signed as Standard Webhooks define (
        <code>webhook-signature</code>, with the secret shown once below). Deliveries never hold transcript text.
      </p>
      <section className="card" aria-labelledby="new-webhook-title">
        <h2 id="new-webhook-title">New webhook</h2>
        <form onSubmit={(e) => void create(e)}>
          <div className="field">
            <label htmlFor="webhook-url">URL</label>
            <input id="webhook-url" name="url" type="url" required placeholder="https://example.com/hooks/archive" />
          </div>
          <fieldset className="field">
            <legend>Events</legend>
            {EVENTS.map((t) => (
              <label key={t} className="checkbox">
                <input type="checkbox" name={`event-${t}`} defaultChecked={t.startsWith('session.')} /> {t}
              </label>
            ))}
          </fieldset>
          {projects.length >= PROJECTS_BEFORE_FILTER && (
            <div className="field">
              <label htmlFor="webhook-project-filter">Find a project</label>
              <input
                id="webhook-project-filter"
                type="search"
                value={projectFilter}
                onChange={(e) => setProjectFilter(e.target.value)}
                // Enter narrows; it does not make the webhook.
                onKeyDown={(e) => e.key === 'Enter' && e.preventDefault()}
                aria-describedby="webhook-project-filter-hint"
              />
              <small id="webhook-project-filter-hint" aria-live="polite">
                {needle ? `${listed.length} of ${projects.length} projects listed under For.` : `Narrows the ${projects.length} projects listed under For.`}
              </small>
            </div>
          )}
          <div className="field">
            <label htmlFor="webhook-scope">For</label>
            <select id="webhook-scope" name="scope" value={scope} onChange={(e) => setScope(e.target.value)} aria-describedby="webhook-scope-hint">
              <option value="">Your own projects</option>
              {listed.length > 0 && (
                <optgroup label="One project">
                  {listed.map((p) => (
                    <option key={p.id} value={`project:${p.id}`}>
                      {projectLabel(p)}
                    </option>
                  ))}
                </optgroup>
              )}
              {adminOf.length > 0 && (
                <optgroup label="A team you administer">
                  {adminOf.map((t) => (
                    <option key={t.id} value={`team:${t.id}`}>
                      {t.name}
                    </option>
                  ))}
                </optgroup>
              )}
            </select>
            <small id="webhook-scope-hint">
              Your own projects: every project you own (not a team's), also those made later. A team: its projects and its members.
            </small>
          </div>
          <button type="submit">Create webhook</button>
        </form>
        <FormError error={error} />
        {created && (
          <>
            <p>
              The secret of <strong>{created.url}</strong>, shown only now:
            </p>
            <CopyOnce label="New webhook secret" value={created.secret} what="secret" />
          </>
        )}
      </section>
      {hooks === null ? (
        <p role="status">Loading the webhooks…</p>
      ) : hooks.length === 0 ? (
        <p>No webhooks yet.</p>
      ) : (
        hooks.map((w) => (
          <section key={w.id} className="card" aria-label={`Webhook ${w.url}`}>
            <h2 className="wrap">{w.url}</h2>
            <p>
              {w.events.join(', ')} · {scopeOf(w, projects, teams)} · made {when(w.createdAt)}
              {w.disabled && <strong> · disabled{w.disabledReason ? `: ${w.disabledReason}` : ''}</strong>}
            </p>
            <div className="actions">
              <button type="button" aria-expanded={open === w.id} onClick={() => setOpen(open === w.id ? null : w.id)}>
                {open === w.id ? 'Hide deliveries' : 'Deliveries'}
              </button>
              <button type="button" className="danger" aria-label={`Delete ${w.url}`} onClick={() => setDeleting(w)}>
                Delete
              </button>
            </div>
            {open === w.id && <Deliveries webhook={w} />}
          </section>
        ))
      )}
      {deleting && (
        <ConfirmDialog title="Delete this webhook?" confirmLabel="Delete webhook" onCancel={() => setDeleting(null)} onConfirm={() => void remove(deleting)}>
          <p className="wrap">
            <strong>{deleting.url}</strong> gets no more events, and its deliveries are forgotten. A new webhook to the same address has a new secret.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
