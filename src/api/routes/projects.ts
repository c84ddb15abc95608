/** Projects: list, create, read, update, delete, move between owners. */
import { defineRoute } from '../route';
import { envelope, z } from '../schemas/common';
import { projectParam } from '../schemas/params';
import * as R from '../schemas/resources';
import * as inputs from '../../services/inputs';
import { RetentionPreview } from '../schemas/retention';

const resumable = inputs.ResumableParam;

export const projectRoutes = {
  listProjects: defineRoute({
    method: 'get',
    path: '/projects',
    tag: 'Projects',
    auth: 'key',
    summary: 'List your projects',
    description: 'Most recent `lastActivity` first.',
    query: z.object({ resumable }),
    responses: { 200: { description: 'Your projects.', schema: envelope(z.strictObject({ projects: z.array(R.Project), total: z.int().min(0) })) } },
  }),
  createProject: defineRoute({
    method: 'post',
    path: '/projects',
    tag: 'Projects',
    auth: 'key',
    summary: 'Create a project',
    body: inputs.CreateProjectInput,
    idempotent: true,
    responses: { 201: { description: 'Created.', schema: envelope(z.strictObject({ project: R.Project })) } },
    errors: [403, 404, 409],
  }),
  getProject: defineRoute({
    method: 'get',
    path: '/projects/{projectId}',
    tag: 'Projects',
    auth: 'key',
    summary: 'Get a project',
    params: projectParam,
    responses: { 200: { description: 'The project.', schema: envelope(z.strictObject({ project: R.Project })) } },
    errors: [403, 404],
  }),
  updateProject: defineRoute({
    method: 'patch',
    path: '/projects/{projectId}',
    tag: 'Projects',
    auth: 'key',
    summary: 'Update a project',
    params: projectParam,
    description: '`retentionDays`: the owner or an admin of its team; `legalHold`: instance administrators only (403 otherwise).',
    body: inputs.UpdateProjectInput,
    responses: { 200: { description: "The updated project's fields, directly in `data` (client-compatible).", schema: envelope(R.Project) } },
    errors: [403, 404],
  }),
  deleteProject: defineRoute({
    method: 'delete',
    path: '/projects/{projectId}',
    tag: 'Projects',
    auth: 'key',
    summary: 'Delete a project with its sessions',
    params: projectParam,
    description: '409 `Project is on legal hold` while the project or its team is on legal hold.',
    responses: { 200: { description: 'Deleted: its sessions, their content and search entries are gone.', schema: envelope(R.DeletedProject) } },
    errors: [403, 404, 409],
  }),
  retentionPreview: defineRoute({
    method: 'get',
    path: '/projects/{projectId}/retention/preview',
    tag: 'Projects',
    auth: 'key',
    summary: 'What the retention sweep would delete of a project now',
    description:
      "Every session whose `updatedAt` is older than the retention that applies (the project's, else its team's, else RETENTION_DAYS); none while the project or its team is on legal hold. The project's readers.",
    params: projectParam,
    responses: { 200: { description: 'The preview.', schema: envelope(RetentionPreview) } },
    errors: [403, 404],
  }),
  moveProject: defineRoute({
    method: 'post',
    path: '/projects/{projectId}/move',
    tag: 'Projects',
    auth: 'key',
    summary: 'Move a project into a team, or take it personally',
    body: inputs.MoveProjectInput,
    idempotent: true,
    params: z.object({ projectId: z.string() }),
    description:
      '`{teamId}`: by its owner or an admin of its team, into a team where you are admin or member (a team you are not in → 404 `Team not found`, a viewer → 403). `{teamId: null}`: a team admin takes a team project as their own. Sessions and uploaders stay; search follows within the usual freshness.',
    responses: { 200: { description: 'The moved project.', schema: envelope(z.strictObject({ project: R.Project })) } },
    errors: [403, 404],
  }),
};
