/**
 * What a stored session is made of, as every layer names it: its row (prisma/schema.prisma's
 * `Session` as the mariadb driver returns it), its key, the orders its lists come in, the kinds of
 * its labels and the parts of its content. Types and names only: the statements that read and
 * write them are src/data's.
 */
import type { SessionModel } from '../generated/prisma/models';
import type { DriverRow } from './driver-row';

/**
 * The columns a read of a session row returns, in this order: every column of `sessions` but
 * hasGitBranches (only filters and the search index read it).
 */
export const ROW_KEYS = [
  'projectId',
  'id',
  'userId',
  'name',
  'userTitle',
  'markdownSize',
  'rawDataSize',
  'etag',
  'contentDigest',
  'createdAt',
  'updatedAt',
  'startedAt',
  'endedAt',
  'clientName',
  'clientVersion',
  'agentName',
  'deviceId',
  'metadataJson',
  'sessionDataSize',
  'sessionDataDigest',
  'redactionsJson',
  'uploadedBy',
  'costUsd',
] as const satisfies ReadonlyArray<keyof SessionModel>;

// A column added to the model and not to ROW_KEYS (nor left out on purpose here) fails the typecheck.
const _everyColumn: [Exclude<keyof SessionModel, (typeof ROW_KEYS)[number] | 'hasGitBranches'>] extends [never] ? true : never = true;

/** A session's row. */
export type SessionRow = Pick<DriverRow<SessionModel>, (typeof ROW_KEYS)[number]> & {
  /** The uploader's name (else email), when the read selected it. */
  uploaderName?: string | null;
};

export interface SessionKey {
  projectId: string;
  sessionId: string;
}

/** The orders of session lists (GraphQL's SessionOrder). */
export type SessionOrder =
  'CREATED_AT_DESC' | 'CREATED_AT_ASC' | 'UPDATED_AT_DESC' | 'UPDATED_AT_ASC' | 'STARTED_AT_DESC' | 'STARTED_AT_ASC' | 'NAME_ASC' | 'COST_DESC' | 'COST_ASC';

/** Label kinds stored in session_labels for the array-valued metadata. */
export const LABEL_KINDS = { llmModels: 'llmModel', tags: 'tag', gitBranches: 'gitBranch' } as const;

export type LabelKind = (typeof LABEL_KINDS)[keyof typeof LABEL_KINDS];

/** A part of a session's content. 'session': the upload CLI's session data, a third part treated like raw data. */
export type ContentPart = 'markdown' | 'raw' | 'session';
