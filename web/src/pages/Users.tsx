import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { formText, rest, type Schema } from '../api/rest';
import { useSession } from '../session';
import { ConfirmDialog, Field, FormError, when } from './ui';

type AdminUser = Schema<'AdminUser'>;

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** `/settings/users` (admins): create, reset a password (one-time link), disable, delete. */
export function UsersPage() {
  const { user } = useSession();
  const [users, setUsers] = useState<AdminUser[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [link, setLink] = useState<string | null>(null);
  const [disabling, setDisabling] = useState<AdminUser | null>(null);
  const [deleting, setDeleting] = useState<AdminUser | null>(null);
  const [done, setDone] = useState<string | null>(null);

  const load = useCallback(async () => {
    const r = await rest.get('/users');
    if (r.ok && r.data) setUsers(r.data.users);
    else setError(r.error ?? 'Users could not be listed');
  }, []);
  useEffect(() => {
    if (user?.role === 'admin') void load();
  }, [load, user]);

  if (user?.role !== 'admin') {
    return (
      <>
        <h1>Users</h1>
        <p>Only administrators manage users.</p>
      </>
    );
  }

  const create = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const formEl = e.currentTarget;
    const form = new FormData(formEl);
    setError(null);
    const r = await rest.post('/users', {
      body: { email: formText(form, 'email'), name: formText(form, 'name'), role: form.get('admin') ? 'admin' : 'member' },
    });
    if (!r.ok) return setError(r.error ?? 'The user could not be created');
    setLink(r.data?.link ?? null);
    formEl.reset();
    await load();
  };
  const reset = async (u: AdminUser) => {
    const r = await rest.post('/users/{userId}/reset-password', { params: { userId: u.id } });
    if (r.ok) setLink(r.data?.link ?? null);
    else setError(r.error ?? 'No reset link could be made');
  };
  const setDisabled = async (u: AdminUser, disabled: boolean) => {
    setDisabling(null);
    setError(null);
    const params = { userId: u.id };
    const r = disabled ? await rest.post('/users/{userId}/disable', { params }) : await rest.post('/users/{userId}/enable', { params });
    if (!r.ok) setError(r.error ?? 'The user could not be changed');
    await load();
  };
  const remove = async (u: AdminUser) => {
    setDeleting(null);
    setError(null);
    setDone(null);
    const r = await rest.delete('/users/{userId}', { params: { userId: u.id } });
    if (!r.ok || !r.data) setError(`${u.email} was not deleted: ${r.error ?? 'the request failed'}`);
    else setDone(`Deleted ${u.email} with ${count(r.data.projects, 'project')} and ${count(r.data.sessions, 'session')}.`);
    await load();
  };

  return (
    <>
      <h1>Users</h1>
      <FormError error={error} />
      {done && <p role="status">{done}</p>}
      {link && (
        <section className="card" aria-labelledby="reset-title">
          <h2 id="reset-title">One-time reset link</h2>
          <p>Valid for one hour, once. Send it to the person.</p>
          <output aria-label="Reset link" className="token">
            {link}
          </output>
        </section>
      )}
      <section className="card" aria-labelledby="new-user-title">
        <h2 id="new-user-title">Create a user</h2>
        <form onSubmit={(e) => void create(e)}>
          <Field label="Email" name="email" type="email" required />
          <Field label="Name" name="name" />
          <div className="field checkbox">
            <input id="new-user-admin" type="checkbox" name="admin" />
            <label htmlFor="new-user-admin">Administrator</label>
          </div>
          <button type="submit">Create user</button>
        </form>
        <p className="hint">The new user chooses a password through the one-time link shown here.</p>
      </section>
      {users === null ? (
        <p role="status">Loading users…</p>
      ) : (
        <table className="stack">
          <caption className="visually-hidden">Users</caption>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Created</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <tr key={u.id}>
                <th scope="row">{u.email}</th>
                <td data-label="Name">{u.name}</td>
                <td data-label="Role">{u.role}</td>
                <td data-label="Created">{when(u.createdAt)}</td>
                <td data-label="Status">{u.disabledAt ? `Disabled ${when(u.disabledAt)}` : 'Active'}</td>
                <td className="actions">
                  <button type="button" aria-label={`Reset password of ${u.email}`} onClick={() => void reset(u)}>
                    Reset password
                  </button>
                  {u.disabledAt && (
                    <button type="button" aria-label={`Enable ${u.email}`} onClick={() => void setDisabled(u, false)}>
                      Enable
                    </button>
                  )}
                  {!u.disabledAt && u.id !== user.id && (
                    <button type="button" className="danger" aria-label={`Disable ${u.email}`} onClick={() => setDisabling(u)}>
                      Disable
                    </button>
                  )}
                  {u.id !== user.id && (
                    <button type="button" className="danger" aria-label={`Delete ${u.email}`} onClick={() => setDeleting(u)}>
                      Delete
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {disabling && (
        <ConfirmDialog
          title={`Disable ${disabling.email}?`}
          confirmLabel="Disable user"
          onCancel={() => setDisabling(null)}
          onConfirm={() => void setDisabled(disabling, true)}
        >
          <p>Their keys, logged-in clients and browser sessions stop working at once.</p>
        </ConfirmDialog>
      )}
      {deleting && (
        <ConfirmDialog
          title={`Delete ${deleting.email}?`}
          confirmLabel="Delete user"
          onCancel={() => setDeleting(null)}
          onConfirm={() => void remove(deleting)}
        >
          <p>
            This deletes {deleting.name ? `${deleting.name} (${deleting.email})` : deleting.email} for good: their own projects with every session in them,
            their API keys, logged-in clients, connectors, webhooks and the share links they made, and their place in their teams. Team projects stay with their
            teams.
          </p>
          <p>It cannot be undone. It is refused while one of their projects is on legal hold, or when they are the last admin of a team.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
