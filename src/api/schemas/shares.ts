/** Share links: what their owner sees, and what a link shows. */
import { Timestamp, z } from './common';

export const Audience = z
  .enum(['public', 'signed-in'])
  .meta({ description: '`public`: anyone with the link; `signed-in`: any signed-in account of this service.' });

export const Share = z
  .strictObject({
    id: z.string(),
    url: z.string().meta({ description: '`<base>/s/<token>`; the token carries 128 random bits and a MAC, never a session or project id.' }),
    projectId: z.string(),
    sessionId: z.string(),
    sessionTitle: z.string().meta({ description: 'The session’s display title now (its user title, else the client’s `metadata.title`, else its name).' }),
    createdAt: Timestamp,
    snapshotAt: Timestamp.meta({ description: 'When the snapshot the link shows was taken (creation or the last refresh).' }),
    expiresAt: Timestamp.nullable(),
    audience: Audience,
    hiddenExchanges: z.array(z.int()),
    exchangeCount: z.int().min(0),
    views: z.int().min(0),
  })
  .meta({ id: 'Share', description: 'A share link (docs/shares.md). Only its creator sees it.' });

const SharedExchange = z.union([
  z.strictObject({ number: z.int().min(1), title: z.string(), markdown: z.string() }),
  z.strictObject({ number: z.int().min(1), hidden: z.literal(true) }),
]);

export const SharedSession = z
  .strictObject({
    title: z.string(),
    createdAt: Timestamp.meta({ description: 'The session’s creation time.' }),
    sharedAt: Timestamp.meta({ description: 'When the snapshot was taken.' }),
    agentName: z.string().nullable(),
    llmModels: z.array(z.string()),
    exchangeCount: z.int().min(0),
    hiddenCount: z.int().min(0),
    from: z.int().min(1),
    nextFrom: z.int().min(1).nullable().meta({ description: 'The `from` of the next page; null at the end.' }),
    exchanges: z.array(SharedExchange),
  })
  .meta({ id: 'SharedSession', description: 'What a share link shows: never raw data, session data, tags, device, branch or any email.' });
