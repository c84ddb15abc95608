import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { gql } from '../api/graphql';
import { graphql } from '../gql';
import { PROJECT_COLORS, PROJECT_ICONS } from '../../../src/domain/project';
import type { Project, Team } from './Projects';
import { ProjectIcon, iconLabel } from './icons';
import { canUploadTo } from './roles';
import { daysText, HoldNotice, loadPreview, RetentionFieldset, RetentionPreview, retentionChoice, retentionValue, type Preview } from './Retention';
import { useSession } from '../session';
import { CheckboxField, errorText, FormError } from './ui';

const UpdateProjectDocument = graphql(`
  mutation UpdateProject($id: ID!, $input: UpdateProjectInput!) {
    updateProject(id: $id, input: $input) {
      id
      name
      icon
      color
      retentionDays
      legalHold
    }
  }
`);

const MoveProjectDocument = graphql(`
  mutation MoveProject($id: ID!, $teamId: ID) {
    moveProject(id: $id, teamId: $teamId) {
      id
      owner {
        __typename
        ... on User {
          name
        }
        ... on Team {
          name
        }
      }
    }
  }
`);

const PERSONAL = '';

/** What applies when the project sets no retention: its team's, else the instance's (from the preview), else kept. */
function inheritedText(project: Project, preview: Preview | null): string {
  if (project.owner.__typename === 'Team' && project.owner.retentionDays != null)
    return `${project.retentionDays != null ? 'Then' : 'Now'} the team's retention applies: sessions not updated for ${daysText(project.owner.retentionDays)} are deleted.`;
  if (project.retentionDays != null || !preview) return "Then the team's retention applies, else the instance's; set nowhere, sessions are kept forever.";
  return preview.retentionDays === null
    ? 'Now sessions are kept forever: neither the team nor the instance sets a retention.'
    : `Now the instance's retention applies: sessions not updated for ${daysText(preview.retentionDays)} are deleted.`;
}

/**
 * A project's Edit dialog: name, icon, colour, its Owner (Personal, or a team where the caller
 * is admin or member; changing it moves the project with its sessions: docs/teams.md), its
 * retention with a preview of the next sweep, and its legal hold (a checkbox for instance
 * administrators, a notice for others while it is on). `onDone` gets what to announce, or null
 * when nothing was saved.
 */
export function EditProjectDialog({ project, teams, onDone }: { project: Project; teams: Team[]; onDone: (saved: string | null) => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  const [name, setName] = useState(project.name);
  const [icon, setIcon] = useState(project.icon);
  const [color, setColor] = useState(project.color);
  const ownerNow = project.owner.__typename === 'Team' ? project.owner.id : PERSONAL;
  const [owner, setOwner] = useState(ownerNow);
  const [retention, setRetention] = useState(retentionChoice(project.retentionDays));
  const [daysError, setDaysError] = useState<string | null>(null);
  const [hold, setHold] = useState(project.legalHold);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const holdSetter = useSession().user?.role === 'admin';
  const teamHeld = project.owner.__typename === 'Team' && project.owner.legalHold;
  // Teams a project may move into; the team that owns it now is listed even if the list is stale.
  const targets = teams.filter((t) => canUploadTo(t.role) || t.id === ownerNow);
  if (project.owner.__typename === 'Team' && !targets.some((t) => t.id === ownerNow))
    targets.push({ id: ownerNow, name: project.owner.name, role: project.owner.role });
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  // The retention that applies when the project sets none comes with the preview (the instance's is not otherwise known).
  useEffect(() => {
    loadPreview(project.id).then(setPreview, () => undefined);
  }, [project.id]);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const days = retentionValue(retention);
    if ('error' in days) {
      setDaysError(days.error);
      return;
    }
    setDaysError(null);
    setBusy(true);
    setError(null);
    try {
      const input = {
        name,
        icon,
        color,
        // Only what changed: each change is a line of the audit log, and a legal hold is the administrators' alone.
        ...(days.days !== (project.retentionDays ?? null) && { retentionDays: days.days }),
        ...(holdSetter && hold !== project.legalHold && { legalHold: hold }),
      };
      const r = await gql(UpdateProjectDocument, { id: project.id, input });
      let saved = `Saved project ${r.updateProject.name}.`;
      if (owner !== ownerNow) {
        const m = await gql(MoveProjectDocument, { id: project.id, teamId: owner === PERSONAL ? null : owner });
        saved += m.moveProject.owner.__typename === 'Team' ? ` It now belongs to ${m.moveProject.owner.name}.` : ' It is now personal.';
      }
      onDone(saved);
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };
  return (
    <dialog ref={ref} aria-labelledby={`${id}-title`} onCancel={() => onDone(null)}>
      <h2 id={`${id}-title`}>Edit project</h2>
      <form onSubmit={(e) => void submit(e)}>
        <div className="field">
          <label htmlFor={`${id}-name`}>Project name</label>
          <input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-icon`}>Icon</label>
          <div className="row">
            <ProjectIcon icon={icon} color={color} />
            <select id={`${id}-icon`} value={icon} onChange={(e) => setIcon(e.target.value)}>
              {PROJECT_ICONS.map((x) => (
                <option key={x} value={x}>
                  {iconLabel(x)}
                </option>
              ))}
            </select>
          </div>
        </div>
        <div className="field">
          <label htmlFor={`${id}-color`}>Colour</label>
          <select id={`${id}-color`} value={color} onChange={(e) => setColor(e.target.value)}>
            {PROJECT_COLORS.map((x) => (
              <option key={x} value={x}>
                {x}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${id}-owner`}>Owner</label>
          <select id={`${id}-owner`} value={owner} onChange={(e) => setOwner(e.target.value)} aria-describedby={`${id}-owner-hint`}>
            <option value={PERSONAL}>Personal</option>
            {targets.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
          <small id={`${id}-owner-hint`} className="hint">
            Moves the project with all its sessions. A team&apos;s members read everything in it.
          </small>
        </div>
        <RetentionFieldset
          choice={retention}
          onChange={(c) => {
            setRetention(c);
            setDaysError(null);
          }}
          inherited={inheritedText(project, preview)}
          error={daysError}
        />
        <RetentionPreview projectId={project.id} />
        {holdSetter ? (
          <CheckboxField
            label="Legal hold"
            checked={hold}
            onChange={(e) => setHold(e.target.checked)}
            hint={`While on, no session of this project is deleted by anyone, the retention sweep included.${teamHeld ? ' Its team is on legal hold too.' : ''}`}
          />
        ) : (
          (project.legalHold || teamHeld) && <HoldNotice what={project.legalHold ? 'This project' : 'Its team'} />
        )}
        <FormError error={error} />
        <div className="actions">
          <button type="button" onClick={() => onDone(null)}>
            Cancel
          </button>
          <button type="submit" disabled={busy}>
            Save
          </button>
        </div>
      </form>
    </dialog>
  );
}
