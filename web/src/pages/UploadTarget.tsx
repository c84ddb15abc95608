import { useEffect, useId, useState } from 'react';
import { gql } from '../api/graphql';
import { graphql } from '../gql';
import type { UploadTeamsQuery } from '../gql/graphql';
import { canUploadTo } from './roles';
import { errorText } from './ui';

/*
 * Where the projects a credential creates go (an API key or a logged-in client): Personal, or a
 * team where the caller is admin or member (viewers may not bind credentials). See docs/teams.md.
 */

const UploadTeamsDocument = graphql(`
  query UploadTeams {
    teams {
      id
      name
      role
    }
  }
`);

export type UploadTeam = UploadTeamsQuery['teams'][number];

/** The caller's teams (all of them: a key's list names the team even after a role change), or an error. */
export function useTeams(): { teams: UploadTeam[] | null; error: string | null } {
  const [teams, setTeams] = useState<UploadTeam[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    gql(UploadTeamsDocument).then(
      (r) => live && setTeams(r.teams),
      (err: unknown) => live && setError(errorText(err)),
    );
    return () => {
      live = false;
    };
  }, []);
  return { teams, error };
}

/** The select `Upload new projects to`; value '' is Personal. */
export function UploadTargetField({ teams, value, onChange, name }: { teams: UploadTeam[]; value: string; onChange: (teamId: string) => void; name?: string }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>Upload new projects to</label>
      <select id={id} name={name} value={value} onChange={(e) => onChange(e.target.value)} aria-describedby={`${id}-hint`}>
        <option value="">Personal</option>
        {teams
          .filter((t) => canUploadTo(t.role))
          .map((t) => (
            <option key={t.id} value={t.id}>
              {t.name}
            </option>
          ))}
      </select>
      <small id={`${id}-hint`} className="hint">
        Projects this client creates (a sync of a new repository) belong there; with a team, every teammate&apos;s sync of a repository lands in the same
        project.
      </small>
    </div>
  );
}
