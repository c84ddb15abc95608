import { useCallback, useEffect, useState } from 'react';
import { Link } from 'react-router';
import { gql } from '../api/graphql';
import { useSessionChanges } from '../api/live';
import { graphql } from '../gql';
import type { ProjectsQuery } from '../gql/graphql';
import { size } from './filters';
import { roleName } from './roles';
import { EditProjectDialog } from './ProjectEdit';
import { ProjectIcon } from './icons';
import { deleteErrorText, heldText } from './Retention';
import { ConfirmDialog, errorText, when } from './ui';

/*
 * The home page: the caller's projects, most recent activity first, each with its icon, colour,
 * session count and last activity, grouped under Personal and each team the caller is in (see
 * docs/teams.md); edit name / icon / colour; delete after a confirmation that names what is lost
 * (the owner, or an admin of the owning team). Project names are uploaded text: shown as text only.
 */

const ProjectsDocument = graphql(`
  query Projects {
    projects {
      id
      name
      icon
      color
      sessionCount
      totalMarkdownSize
      lastActivity
      retentionDays
      legalHold
      viewerCan {
        edit
        delete
      }
      owner {
        __typename
        ... on User {
          id
          name
        }
        ... on Team {
          id
          name
          role
          retentionDays
          legalHold
        }
      }
    }
    teams {
      id
      name
      role
    }
  }
`);

const DeleteProjectDocument = graphql(`
  mutation DeleteProject($id: ID!) {
    deleteProject(id: $id) {
      deletedAt
    }
  }
`);

export type Project = ProjectsQuery['projects'][number];
export type Team = ProjectsQuery['teams'][number];

/** The project's own legal hold, or its team's: no session of it can be deleted. */
const projectHeld = (p: Project) => p.legalHold || (p.owner.__typename === 'Team' && p.owner.legalHold);

/** A heading of the projects page: Personal, or a team with the caller's role in it. */
interface Group {
  key: string;
  name: string;
  role: Team['role'] | null;
  projects: Project[];
}

/**
 * Personal projects first, then one group per team the caller is in (by name, as `teams` lists
 * them), each keeping the most-recent-activity order. A team project of a team missing from the
 * list (joined between the two reads) still gets its group, named as the project's owner says.
 */
export function groupProjects(projects: Project[], teams: Team[]): Group[] {
  const personal: Group = { key: 'personal', name: 'Personal', role: null, projects: [] };
  const byTeam = new Map<string, Group>(teams.map((t) => [t.id, { key: t.id, name: t.name, role: t.role, projects: [] }]));
  for (const p of projects) {
    if (p.owner.__typename !== 'Team') {
      personal.projects.push(p);
      continue;
    }
    let g = byTeam.get(p.owner.id);
    if (!g) byTeam.set(p.owner.id, (g = { key: p.owner.id, name: p.owner.name, role: p.owner.role, projects: [] }));
    g.projects.push(p);
  }
  return [personal, ...byTeam.values()];
}

/** Settings, move and delete: the owning user, or an admin of the owning team. */
const sessions = (n: number) => (n === 1 ? '1 session' : `${n} sessions`);

export function ProjectsPage() {
  const [projects, setProjects] = useState<Project[] | null>(null);
  const [teams, setTeams] = useState<Team[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');
  const [editing, setEditing] = useState<Project | null>(null);
  const [deleting, setDeleting] = useState<Project | null>(null);

  const load = useCallback(
    () =>
      gql(ProjectsDocument).then(
        (r) => {
          setProjects(r.projects);
          setTeams(r.teams);
        },
        (err: unknown) => setError(errorText(err)),
      ),
    [],
  );
  useEffect(() => {
    void load();
  }, [load]);
  // Counts, sizes and last activity follow uploads as they happen (a new project appears with its first session).
  useSessionChanges(null, () => void load());

  const remove = async (p: Project) => {
    setDeleting(null);
    setError(null);
    try {
      await gql(DeleteProjectDocument, { id: p.id });
      setProjects((list) => list && list.filter((x) => x.id !== p.id));
      setStatus(`Deleted project ${p.name} and ${sessions(p.sessionCount)}.`);
      await load();
    } catch (err) {
      setError(deleteErrorText(err, heldText(`Project ${p.name}`, 'it')));
    }
  };

  return (
    <>
      <h1>Projects</h1>
      <p role="status" className="status">
        {status}
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {projects === null ? (
        !error && <p role="status">Loading projects…</p>
      ) : projects.length === 0 && teams.length === 0 ? (
        <p>
          No projects yet. Upload sessions with the upload CLI (<Link to="/cli-login">log it in</Link>) or with an <Link to="/settings/api-keys">API key</Link>.
        </p>
      ) : teams.length === 0 ? (
        // Without teams there is nothing to group: one list, as before teams existed.
        <ProjectList label="Projects" level={2} projects={projects} onEdit={setEditing} onDelete={setDeleting} />
      ) : (
        groupProjects(projects, teams).map((g) => (
          <section key={g.key} className="project-group" aria-labelledby={`group-${g.key}`}>
            <h2 id={`group-${g.key}`}>{g.name}</h2>
            {g.role && <p className="muted">Team · your role: {roleName(g.role)}</p>}
            {g.projects.length === 0 ? (
              <p>{g.role ? 'No projects in this team yet.' : 'No personal projects.'}</p>
            ) : (
              <ProjectList label={g.name} level={3} projects={g.projects} onEdit={setEditing} onDelete={setDeleting} />
            )}
          </section>
        ))
      )}
      {editing && (
        <EditProjectDialog
          project={editing}
          teams={teams}
          onDone={(saved) => {
            setEditing(null);
            // Announced once the page shows it (a moved project is under its new heading by then).
            if (saved) void load().then(() => setStatus(saved));
          }}
        />
      )}
      {deleting && (
        <ConfirmDialog
          title={`Delete project ${deleting.name} and its ${sessions(deleting.sessionCount)}?`}
          confirmLabel="Delete project"
          onConfirm={() => void remove(deleting)}
          onCancel={() => setDeleting(null)}
        >
          <p>
            This deletes the project <strong>{deleting.name}</strong> and its {sessions(deleting.sessionCount)} ({size(deleting.totalMarkdownSize)} of markdown,
            their raw data and search entries). It cannot be undone.
          </p>
          {projectHeld(deleting) && (
            <p className="error">This project is on legal hold: the service refuses to delete it until an instance administrator lifts the hold.</p>
          )}
        </ConfirmDialog>
      )}
    </>
  );
}

function ProjectList({
  label,
  level,
  projects,
  onEdit,
  onDelete,
}: {
  label: string;
  level: 2 | 3;
  projects: Project[];
  onEdit: (p: Project) => void;
  onDelete: (p: Project) => void;
}) {
  const H = level === 2 ? 'h2' : 'h3';
  return (
    <ul className="projects" aria-label={label}>
      {projects.map((p) => (
        <li key={p.id} className="card project">
          <ProjectIcon icon={p.icon} color={p.color} />
          <div className="project-main">
            <H>
              <Link to={`/projects/${encodeURIComponent(p.id)}`}>{p.name}</Link>
              {projectHeld(p) && <span className="badge warn">Legal hold</span>}
            </H>
            <p className="muted">
              {sessions(p.sessionCount)} · {size(p.totalMarkdownSize)} · last activity {when(p.lastActivity)}
            </p>
          </div>
          {(p.viewerCan.edit || p.viewerCan.delete) && (
            <div className="actions">
              {p.viewerCan.edit && (
                <button type="button" aria-label={`Edit ${p.name}`} onClick={() => onEdit(p)}>
                  Edit
                </button>
              )}
              {p.viewerCan.delete && (
                <button type="button" className="danger" aria-label={`Delete ${p.name}`} onClick={() => onDelete(p)}>
                  Delete
                </button>
              )}
            </div>
          )}
        </li>
      ))}
    </ul>
  );
}
