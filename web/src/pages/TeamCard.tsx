import { lazy, Suspense, useId, useState, type FormEvent } from 'react';
import { gql } from '../api/graphql';
import { graphql } from '../gql';
import type { TeamRole } from '../gql/graphql';
import { useSession } from '../session';
import { ROLES, roleName } from './roles';
import { daysText, deleteErrorText, HoldNotice, heldText, RetentionFieldset, retentionChoice, retentionValue } from './Retention';
import type { TeamData } from './Teams';
import { CheckboxField, ConfirmDialog, CopyOnce, errorText, Field, FormError, formText, when } from './ui';

/** The team's usage brings Chart.js: loaded (from this origin) with the first team card. */
const UsagePanel = lazy(() => import('./Usage').then((m) => ({ default: m.UsagePanel })));
const USAGE_DAYS = 30;

const SetRoleDocument = graphql(`
  mutation SetTeamMemberRole($teamId: ID!, $userId: ID!, $role: TeamRole!) {
    setTeamMemberRole(teamId: $teamId, userId: $userId, role: $role) {
      role
    }
  }
`);

const RemoveMemberDocument = graphql(`
  mutation RemoveTeamMember($teamId: ID!, $userId: ID!) {
    removeTeamMember(teamId: $teamId, userId: $userId)
  }
`);

const DeleteTeamDocument = graphql(`
  mutation DeleteTeam($id: ID!) {
    deleteTeam(id: $id)
  }
`);

const CreateInvitationDocument = graphql(`
  mutation CreateTeamInvitation($teamId: ID!, $role: TeamRole!, $email: String) {
    createTeamInvitation(teamId: $teamId, role: $role, email: $email) {
      invitation {
        id
      }
      url
    }
  }
`);

const RevokeInvitationDocument = graphql(`
  mutation RevokeTeamInvitation($teamId: ID!, $id: ID!) {
    revokeTeamInvitation(teamId: $teamId, id: $id)
  }
`);

const UpdateTeamPolicyDocument = graphql(`
  mutation UpdateTeamPolicy($id: ID!, $input: UpdateTeamInput!) {
    updateTeam(id: $id, input: $input) {
      id
      retentionDays
      legalHold
    }
  }
`);

type Member = TeamData['members'][number];
type Invitation = TeamData['invitations'][number];

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** One team on `/settings/teams`. `onChanged` reloads the page's teams (with a status line). */
export function TeamCard({ team, onChanged }: { team: TeamData; onChanged: (message?: string) => Promise<void> }) {
  const { user } = useSession();
  const id = useId();
  const admin = team.role === 'ADMIN';
  const [error, setError] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<{ kind: 'remove'; member: Member } | { kind: 'leave' } | { kind: 'delete' } | null>(null);

  /** Runs a change; the service's message (e.g. the last admin's 409) is shown in this team's card. */
  const run = async (change: () => Promise<unknown>, done: string) => {
    setConfirm(null);
    setError(null);
    try {
      await change();
      await onChanged(done);
    } catch (err) {
      setError(deleteErrorText(err, heldText(`Team ${team.name}`, 'it')));
    }
  };
  const setRole = (m: Member, role: TeamRole) =>
    run(() => gql(SetRoleDocument, { teamId: team.id, userId: m.user.id, role }), `${m.user.name} is now ${roleName(role)} in ${team.name}.`);

  return (
    <section className="card team" aria-labelledby={`${id}-name`}>
      <h2 id={`${id}-name`}>{team.name}</h2>
      <p className="muted">
        Your role: {roleName(team.role)} · {count(team.memberCount, 'member', 'members')} · {count(team.projectCount, 'project', 'projects')} · created{' '}
        {when(team.createdAt)}
      </p>
      <FormError error={error} />
      <table className="stack">
        <caption>Members of {team.name}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Joined</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {team.members.map((m) => {
            const self = m.user.id === user?.id;
            const nameId = `${id}-member-${m.user.id}`;
            return (
              <tr key={m.user.id}>
                <th scope="row" id={nameId}>
                  {m.user.name}
                  {self && ' (you)'}
                </th>
                <td data-label="Email">{m.email}</td>
                <td data-label="Role">
                  {admin ? (
                    <select aria-label="Role" aria-describedby={nameId} value={m.role} onChange={(e) => void setRole(m, e.target.value as TeamRole)}>
                      {ROLES.map((r) => (
                        <option key={r} value={r}>
                          {roleName(r)}
                        </option>
                      ))}
                    </select>
                  ) : (
                    roleName(m.role)
                  )}
                </td>
                <td data-label="Joined">{when(m.joinedAt)}</td>
                <td>
                  {admin && !self && (
                    <button type="button" className="danger" aria-label={`Remove ${m.user.name}`} onClick={() => setConfirm({ kind: 'remove', member: m })}>
                      Remove
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <Suspense fallback={<p role="status">Loading usage…</p>}>
        <UsagePanel teamId={team.id} days={USAGE_DAYS} level={3} label={`What ${team.name}'s sessions cost, last ${USAGE_DAYS} days`} />
      </Suspense>
      <TeamPolicy team={team} onChanged={onChanged} />
      {admin && <Invitations team={team} onChanged={onChanged} onError={setError} />}
      <div className="actions team-actions">
        <button type="button" aria-label={`Leave team ${team.name}`} onClick={() => setConfirm({ kind: 'leave' })}>
          Leave team
        </button>
        {admin && (
          <button type="button" className="danger" aria-label={`Delete team ${team.name}`} onClick={() => setConfirm({ kind: 'delete' })}>
            Delete team
          </button>
        )}
      </div>
      {confirm?.kind === 'remove' && (
        <ConfirmDialog
          title={`Remove ${confirm.member.user.name} from ${team.name}?`}
          confirmLabel="Remove member"
          onCancel={() => setConfirm(null)}
          onConfirm={() =>
            void run(
              () => gql(RemoveMemberDocument, { teamId: team.id, userId: confirm.member.user.id }),
              `Removed ${confirm.member.user.name} from ${team.name}.`,
            )
          }
        >
          <p>From their next request on they no longer see the team&apos;s projects. Sessions they uploaded stay in the team.</p>
        </ConfirmDialog>
      )}
      {confirm?.kind === 'leave' && (
        <ConfirmDialog
          title={`Leave ${team.name}?`}
          confirmLabel="Leave team"
          onCancel={() => setConfirm(null)}
          onConfirm={() => void run(() => gql(RemoveMemberDocument, { teamId: team.id, userId: user!.id }), `You left ${team.name}.`)}
        >
          <p>You no longer see the team&apos;s projects; an admin has to invite you again. Sessions you uploaded stay in the team.</p>
        </ConfirmDialog>
      )}
      {confirm?.kind === 'delete' && (
        <ConfirmDialog
          title={`Delete team ${team.name}?`}
          confirmLabel="Delete team"
          onCancel={() => setConfirm(null)}
          onConfirm={() => void run(() => gql(DeleteTeamDocument, { id: team.id }), `Deleted team ${team.name}.`)}
        >
          <p>A team that still owns projects cannot be deleted: move them (Edit, Owner) or delete them first.</p>
          {team.legalHold && (
            <p className="error">This team is on legal hold: the service refuses to delete it until an instance administrator lifts the hold.</p>
          )}
        </ConfirmDialog>
      )}
    </section>
  );
}

/** An admin's invitations: Invite (a one-time link, shown once with Copy) and the open ones with Revoke. */
function Invitations({ team, onChanged, onError }: { team: TeamData; onChanged: (message?: string) => Promise<void>; onError: (e: string | null) => void }) {
  const id = useId();
  const [created, setCreated] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const invite = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const formEl = e.currentTarget;
    const form = new FormData(formEl);
    const email = formText(form, 'email');
    setBusy(true);
    onError(null);
    try {
      const r = await gql(CreateInvitationDocument, { teamId: team.id, role: form.get('role') as TeamRole, email: email || null });
      formEl.reset();
      setCreated(r.createTeamInvitation.url);
      await onChanged();
    } catch (err) {
      onError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  const revoke = async (i: Invitation) => {
    onError(null);
    try {
      await gql(RevokeInvitationDocument, { teamId: team.id, id: i.id });
      await onChanged(`Revoked the invitation for ${i.email ?? 'anyone with the link'}.`);
    } catch (err) {
      onError(errorText(err));
    }
  };
  const forWhom = (i: Invitation) => i.email ?? 'anyone with the link';
  return (
    <section aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>Invitations</h3>
      {created && (
        <div className="new-key" aria-label="New invitation link" role="group">
          <p>Send this link to the person. It works once, for 7 days, and is shown only now.</p>
          <CopyOnce key={created} label="Invitation link" value={created} what="link" />
          <button type="button" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      )}
      <form onSubmit={(e) => void invite(e)} className="inline-form" aria-label={`Invite to ${team.name}`}>
        <div className="field">
          <label htmlFor={`${id}-role`}>Invite as</label>
          <select id={`${id}-role`} name="role" defaultValue="MEMBER">
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {roleName(r)}
              </option>
            ))}
          </select>
        </div>
        <Field label="Email (optional)" name="email" type="email" maxLength={320} hint="Only this person may accept it; empty: anyone holding the link." />
        <button type="submit" disabled={busy}>
          Invite
        </button>
      </form>
      {team.invitations.length === 0 ? (
        <p>No open invitations.</p>
      ) : (
        <table className="stack">
          <caption>Open invitations to {team.name}</caption>
          <thead>
            <tr>
              <th scope="col">For</th>
              <th scope="col">Role</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {team.invitations.map((i) => (
              <tr key={i.id}>
                <th scope="row">{forWhom(i)}</th>
                <td data-label="Role">{roleName(i.role)}</td>
                <td data-label="Created">{when(i.createdAt)}</td>
                <td data-label="Expires">{when(i.expiresAt)}</td>
                <td>
                  <button
                    type="button"
                    className="danger"
                    aria-label={`Revoke invitation for ${forWhom(i)} as ${roleName(i.role)}`}
                    onClick={() => void revoke(i)}
                  >
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/**
 * A team's retention (its admins) and legal hold (instance administrators; a notice for the other
 * members while it is on). The team's projects that set no retention of their own follow it.
 */
function TeamPolicy({ team, onChanged }: { team: TeamData; onChanged: (message?: string) => Promise<void> }) {
  const id = useId();
  const admin = team.role === 'ADMIN';
  const holdSetter = useSession().user?.role === 'admin';
  const [retention, setRetention] = useState(retentionChoice(team.retentionDays));
  const [hold, setHold] = useState(team.legalHold);
  const [daysError, setDaysError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (!admin && !holdSetter) return team.legalHold ? <HoldNotice what="This team" /> : null;
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const days = admin ? retentionValue(retention) : { days: team.retentionDays ?? null };
    if ('error' in days) {
      setDaysError(days.error);
      return;
    }
    setDaysError(null);
    const input = {
      ...(days.days !== (team.retentionDays ?? null) && { retentionDays: days.days }),
      ...(holdSetter && hold !== team.legalHold && { legalHold: hold }),
    };
    if (Object.keys(input).length === 0) {
      setError('Nothing to save: the retention and the legal hold are as they were.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await gql(UpdateTeamPolicyDocument, { id: team.id, input });
      await onChanged(`Saved the retention and legal hold of ${team.name}.`);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby={`${id}-title`} className="team-policy">
      <h3 id={`${id}-title`}>Retention and legal hold</h3>
      <form onSubmit={(e) => void submit(e)} aria-label={`Retention of ${team.name}`}>
        {admin ? (
          <RetentionFieldset
            choice={retention}
            onChange={(c) => {
              setRetention(c);
              setDaysError(null);
            }}
            inherited="Its projects that set none follow the instance's retention (RETENTION_DAYS); set nowhere, sessions are kept forever."
            error={daysError}
          />
        ) : (
          <p>
            {team.retentionDays == null
              ? "No retention of its own: its projects follow their own, else the instance's."
              : `Sessions not updated for ${daysText(team.retentionDays)} are deleted, unless their project sets its own retention.`}
          </p>
        )}
        {holdSetter ? (
          <CheckboxField
            label="Legal hold"
            checked={hold}
            onChange={(e) => setHold(e.target.checked)}
            hint="While on, no session of any of the team's projects is deleted by anyone, and the team cannot be deleted."
          />
        ) : (
          team.legalHold && <HoldNotice what="This team" />
        )}
        <FormError error={error} />
        <button type="submit" disabled={busy}>
          Save retention
        </button>
      </form>
    </section>
  );
}
