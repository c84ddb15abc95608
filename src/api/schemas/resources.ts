/**
 * REST resources and inputs: projects, sessions, API keys and the upload CLI's endpoints. Output objects
 * are strict (an undocumented field in a response fails the test suite's validation hook);
 * input bodies accept unknown fields, which the API ignores (clients send e.g. `projectId`).
 */
import { Timestamp, z } from './common';
import { choice } from '../../domain/inputs';
import { PROJECT_COLORS, PROJECT_ICONS } from '../../domain/project';
import { UploadInput } from '../../domain/upload';
import { LegalHold, RetentionDays } from './retention';

// ------------------------------------------------------------------------------------------
// Projects

export const ProjectIcon = choice('icon', PROJECT_ICONS).meta({ id: 'ProjectIcon', description: 'Case-sensitive; default `Code2`.' });
export const ProjectColor = choice('color', PROJECT_COLORS).meta({ id: 'ProjectColor', description: 'Case-sensitive; default `blue`.' });
const redactions = z
  .array(
    z.strictObject({
      rule: z.string().meta({ description: 'The rule that found them, e.g. `github-token`, `private-key`, `secret-value`.', example: 'github-token' }),
      count: z.int().min(1).meta({ description: 'How many were found.' }),
    }),
  )
  .meta({
    description:
      'Secrets masked in (or, with `REDACT_SECRETS=report`, only found in) the uploads of this session — name, markdown, raw data, session data, metadata — per rule, sorted by rule; `[]` when none (docs/security.md). Never the values.',
  });

export const SessionMetadata = z
  .object({
    clientName: z.string().nullable(),
    clientVersion: z.string().nullable(),
    agentName: z.string().nullable(),
    deviceId: z.string().nullable(),
    gitBranches: z.array(z.string()),
    llmModels: z.array(z.string()),
    tags: z.array(z.string()),
  })
  .catchall(z.string().nullable())
  .meta({
    id: 'SessionMetadata',
    description:
      'The seven documented fields (unsent strings read `null`, unsent arrays `[]`), plus the extra string keys the client sent (e.g. `machineName`, `title`, `summary`), as they came.',
  });

const Owner = z
  .strictObject({
    type: z.enum(['user', 'team']),
    id: z.string().meta({ description: "The owning user's or team's id (= the project's `ownerId`)." }),
    name: z.string().meta({ description: "The team's name, or the user's name (their email when they have none)." }),
  })
  .meta({ id: 'Owner', description: 'Who owns a project: one user or one team.' });

const Uploader = z
  .strictObject({ id: z.string(), name: z.string() })
  .nullable()
  .meta({ id: 'Uploader', description: 'The user whose credential first created the session; null for sessions stored before teams existed.' });

const sessionFields = {
  id: z.string().meta({ description: 'The session UUID, lower-case.' }),
  clientId: z.string().meta({ description: '= `id` (client-compatible).' }),
  projectId: z.string(),
  name: z.string(),
  userTitle: z.string().nullable(),
  markdownSize: z.int().min(0),
  rawDataSize: z.int().min(0),
  sessionDataSize: z.int().min(0).meta({ description: "Bytes of `sessionData` (the upload CLI's resumable session data), 0 when none." }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  startedAt: Timestamp,
  endedAt: Timestamp,
  metadata: SessionMetadata,
  redactions,
  uploadedBy: Uploader,
};

/** A session without its content; `etag` is absent only in `GET /sessions/recent`. */
export const Session = z
  .strictObject({ ...sessionFields, etag: z.string().optional().meta({ description: 'Same value as the `ETag` header.' }) })
  .meta({ id: 'Session' });

export const ProjectRef = z.strictObject({ id: z.string(), name: z.string(), icon: z.string(), color: z.string(), owner: Owner }).meta({ id: 'ProjectRef' });

const tokens = (description: string) => z.number().int().min(0).meta({ description });
const usd = (description: string) => z.number().min(0).nullable().meta({ description });

export const SessionUsage = z
  .strictObject({
    byModel: z
      .array(
        z.strictObject({
          model: z.string().meta({ description: 'The model as the log names it.' }),
          inputTokens: tokens('Input tokens (without cache reads).'),
          outputTokens: tokens('Output tokens (reasoning included).'),
          cacheReadTokens: tokens('Tokens read from the prompt cache.'),
          cacheWriteTokens: tokens('Tokens written to the prompt cache.'),
          costUsd: usd('USD; null when the price table has no price for the model.'),
        }),
      )
      .meta({ description: 'Per model, by name.' }),
    totalTokens: tokens('Input, output, cache-read and cache-write tokens of every model.'),
    costUsd: usd('USD; null when a model has no price (a total leaving it out would be wrong).'),
  })
  .nullable()
  .meta({
    id: 'SessionUsage',
    description:
      "Tokens and cost read from the session's raw agent log and priced from the service's price table (docs/usage.md); null when the log records no usage.",
  });

export const SessionDetail = z
  .strictObject({ ...sessionFields, etag: z.string(), usage: SessionUsage, markdownContent: z.string(), project: ProjectRef })
  .meta({ id: 'SessionDetail', description: 'A session with its markdown and its project.' });

export const Project = z
  .strictObject({
    id: z.string(),
    ownerId: z.string().meta({ description: "The owning user's or team's id." }),
    owner: Owner,
    name: z.string(),
    icon: ProjectIcon,
    color: ProjectColor,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    sessionCount: z.int().min(0),
    totalMarkdownSize: z.int().min(0),
    lastActivity: Timestamp.meta({ description: "Latest session `updatedAt`, else the project's." }),
    lastUpdated: Timestamp.meta({ description: '= `lastActivity` (the name the upload CLI reads).' }),
    sessions: z.array(Session).optional().meta({ description: 'Only with `resumable=true`: the resumable sessions, newest first.' }),
    retentionDays: RetentionDays,
    legalHold: LegalHold,
  })
  .meta({ id: 'Project' });

export const DeletedProject = z.strictObject({ deletedProject: Project, deletedAt: Timestamp }).meta({ id: 'DeletedProject' });

// ------------------------------------------------------------------------------------------
// Sessions

/**
 * What validates the upload is what is described: the domain's schema. It runs on worker threads,
 * so it is plain zod (maybe built before the OpenAPI extension is loaded): named by zod's `.meta`.
 */
export const UploadSessionBody = UploadInput.meta({
  id: 'UploadSession',
  description: 'Unknown top-level fields (clients send `projectId`) are ignored; the path wins.',
});

export const UploadResult = z
  .strictObject({ sessionId: z.string(), projectId: z.string(), createdAt: Timestamp, updatedAt: Timestamp, etag: z.string() })
  .meta({ id: 'UploadResult' });

export const SessionPage = z
  .strictObject({
    sessions: z.array(Session),
    total: z.int().min(0).meta({ description: 'All sessions of the project.' }),
    projectId: z.string(),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null at the end.' }),
  })
  .meta({ id: 'SessionPage' });

export const RecentSessions = z
  .strictObject({ sessions: z.array(Session), total: z.int().min(0).meta({ description: 'Number of sessions returned.' }) })
  .meta({ id: 'RecentSessions' });

export const SessionSizes = z
  .strictObject({
    sessions: z.record(z.string(), z.int().min(0)).meta({
      description: '`<sessionId>`: markdown bytes, and `<sessionId>:sessionData`: session data bytes for each session that has some.',
    }),
  })
  .meta({ id: 'SessionSizes' });

export const ResumeResult = z
  .strictObject({
    ...sessionFields,
    etag: z.string().optional(),
    projectName: z.string(),
    snippet: z.string().meta({ description: 'From the first matching exchange; matched words wrapped in U+0002 … U+0003, no HTML.' }),
  })
  .meta({ id: 'ResumeResult' });

export const Entitlement = z
  .strictObject({
    plan: z.literal('self-hosted'),
    features: z.strictObject({ resume: z.boolean(), skills: z.boolean(), knowledge_base: z.boolean(), work_tracking: z.boolean(), governance: z.boolean() }),
  })
  .meta({ id: 'Entitlement' });

// ------------------------------------------------------------------------------------------
// API keys

export const ApiKey = z
  .strictObject({
    id: z.string(),
    userId: z.string(),
    name: z.string(),
    createdAt: Timestamp,
    lastUsedAt: Timestamp.nullable(),
    expiresAt: Timestamp.nullable(),
    revokedAt: Timestamp.nullable(),
    scopes: z.array(z.enum(['read', 'write'])).meta({ description: '`["read"]`: a read-only key (every write → 403); `["read", "write"]`: full access.' }),
    teamId: z.string().nullable().meta({
      description: 'The team that owns projects created through this key (new projects of an upload, `POST /projects` without `teamId`); null: your own.',
    }),
  })
  .meta({ id: 'ApiKey', description: 'Never the token.' });

export const CreatedKey = z.strictObject({ key: ApiKey, token: z.string().meta({ description: 'The JWT, shown this once.' }) }).meta({ id: 'CreatedKey' });

// ------------------------------------------------------------------------------------------
// The paged read of a session, by exchange (docs/rest.md; src/services/exchanges.ts)

export const SessionExchange = z
  .strictObject({
    number: z.int().min(1).meta({ description: 'Position of the exchange in the session, from 1 (the reader links to `#exchange-<number>`).' }),
    title: z.string().meta({
      description:
        "The first line of the user's prompt (markdown marks removed, at most 120 characters); for a transcript without turns, its first line. Text, never markup.",
    }),
    start: z.int().min(0).meta({ description: 'Byte offset of the exchange in the markdown.' }),
    size: z.int().min(0).meta({ description: 'Bytes of the exchange (at most 262144: a longer exchange is served in pieces).' }),
    continuation: z.boolean().meta({ description: '`true` for a later piece of an exchange longer than 256 KiB.' }),
    markdown: z.string().optional().meta({ description: 'The exchange\u2019s markdown, byte-exact; absent with `content=false`.' }),
  })
  .meta({ id: 'SessionExchange', description: 'One exchange of a session: a user turn with the agent turns that answer it.' });

export const SessionExchangePage = z
  .strictObject({
    projectId: z.string(),
    sessionId: z.string(),
    etag: z.string().meta({ description: 'The version every exchange of this page comes from (same as the `ETag` header); compare across pages.' }),
    markdownSize: z.int().min(0),
    total: z.int().min(0).meta({ description: 'Number of exchanges of the session.' }),
    offset: z.int().min(0).meta({ description: 'The `offset` asked for.' }),
    exchanges: z.array(SessionExchange),
    nextOffset: z.int().min(1).nullable().meta({ description: '`offset` of the next page; null at the end.' }),
  })
  .meta({ id: 'SessionExchangePage' });

export const RelatedSessions = z
  .strictObject({
    sessions: z.array(
      z.strictObject({
        projectId: z.string(),
        sessionId: z.string(),
        title: z.string().meta({ description: "The display title: the user's title, else the client's, else the name." }),
        score: z.number().meta({ description: 'How alike, in (0, 1]; sessions come most alike first.' }),
        exchange: z
          .strictObject({
            number: z.int().min(1).meta({ description: 'Numbered from 1, as in the paged read by exchange.' }),
            title: z.string(),
            snippet: z.string().meta({ description: 'Up to ~240 characters, HTML-escaped, the words shared with the session in `<mark>`…`</mark>`.' }),
          })
          .meta({ description: 'The exchange that is most like the session.' }),
      }),
    ),
  })
  .meta({ id: 'RelatedSessions' });

export const ImportSummary = z
  .strictObject({
    projects: z.strictObject({ created: z.int().min(0), existing: z.int().min(0) }),
    sessions: z.strictObject({ created: z.int().min(0), updated: z.int().min(0), skipped: z.int().min(0) }),
    imported: z.int().min(0).meta({ description: 'Sessions written (created or updated).' }),
    skipped: z.int().min(0).meta({ description: 'Sessions left as they were by the conflict rule (exists, or not newer, or identical).' }),
    failed: z.int().min(0).meta({ description: 'Sessions of the archive not written (their errors say why).' }),
    errors: z
      .array(
        z.strictObject({
          path: z.string().meta({ description: 'The archive path concerned: a session directory or file (empty for the archive as a whole).' }),
          error: z.string().meta({ description: 'The cause: a check the archive failed, or a fault of this service while writing.' }),
        }),
      )
      .max(100)
      .meta({ description: 'The first errors (at most 100).' }),
    errorCount: z.int().min(0).meta({ description: 'All errors, also those past the first 100.' }),
  })
  .meta({
    id: 'ImportSummary',
    description: 'Projects created or already yours; sessions created, updated, skipped (exists, or not newer); what was not imported and why.',
  });
