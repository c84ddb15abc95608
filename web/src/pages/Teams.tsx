import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { gql } from '../api/graphql';
import { graphql } from '../gql';
import type { TeamsPageQuery } from '../gql/graphql';
import { useFrame } from '../Layout';
import { TeamCard } from './TeamCard';
import { errorText, Field, FormError, formText } from './ui';

/*
 * `/settings/teams`: create a team; per team its members with their roles, and for its admins the
 * Role select, Remove <name>, invitations (Invite: a one-time link shown once with Copy; open
 * invitations with Revoke) and Delete team; Leave team for everyone. The service's own messages
 * are shown as they come (the last admin, a team that still owns projects). See docs/teams.md.
 */

const TeamsPageDocument = graphql(`
  query TeamsPage {
    teams {
      id
      name
      role
      memberCount
      projectCount
      createdAt
      retentionDays
      legalHold
      members {
        user {
          id
          name
        }
        email
        role
        joinedAt
      }
      invitations {
        id
        role
        email
        createdAt
        expiresAt
      }
    }
  }
`);

const CreateTeamDocument = graphql(`
  mutation CreateTeam($name: String!) {
    createTeam(name: $name) {
      id
      name
    }
  }
`);

export type TeamData = TeamsPageQuery['teams'][number];

export function TeamsPage() {
  const [teams, setTeams] = useState<TeamData[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');

  const { reloadTeams } = useFrame();
  const read = useCallback(async () => {
    try {
      setTeams((await gql(TeamsPageDocument)).teams);
    } catch (err) {
      setError(errorText(err));
    }
  }, []);
  useEffect(() => {
    void read();
  }, [read]);
  // After a change, the frame reads the teams again too (a new team's admin gets the audit log link).
  const load = useCallback(() => Promise.all([read(), reloadTeams()]).then(() => undefined), [read, reloadTeams]);

  return (
    <>
      <h1>Teams</h1>
      <p>
        A team owns projects that all its members read; members and admins upload into them, viewers only read. Log the upload CLI in for a team (
        <a href="/cli-login">Log in a client</a>) so that every teammate&apos;s sync of a repository lands in one project.
      </p>
      <p role="status" className="status">
        {status}
      </p>
      <FormError error={error} />
      <CreateTeamForm
        onCreated={async (name) => {
          await load();
          setStatus(`Created team ${name}.`);
        }}
      />
      {teams === null ? (
        !error && <p role="status">Loading teams…</p>
      ) : teams.length === 0 ? (
        <p>You are not in any team yet.</p>
      ) : (
        teams.map((t) => (
          <TeamCard
            key={t.id}
            team={t}
            onChanged={async (message) => {
              // The status is said once the page shows the change.
              await load();
              if (message) setStatus(message);
            }}
          />
        ))
      )}
    </>
  );
}

function CreateTeamForm({ onCreated }: { onCreated: (name: string) => Promise<void> }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const formEl = e.currentTarget;
    const name = formText(new FormData(formEl), 'name');
    setBusy(true);
    setError(null);
    try {
      const r = await gql(CreateTeamDocument, { name });
      formEl.reset();
      await onCreated(r.createTeam.name);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={(e) => void submit(e)} className="card" aria-label="New team">
      <Field label="Team name" name="name" required maxLength={100} />
      <FormError error={error} />
      <button type="submit" disabled={busy}>
        Create team
      </button>
    </form>
  );
}
