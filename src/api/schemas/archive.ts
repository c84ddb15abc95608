/**
 * A session's `session.json` in the export archive (docs/export-import.md; paths, manifest and
 * canonical JSON are src/domain/archive.ts). Its fields are REST's `Session`'s but those left out
 * below, so a field added to sessions is in the archive too; where the archive keeps a field in its
 * own form (what an import restores exactly, checked as an archive from elsewhere is), it says so.
 */
import { z } from 'zod';
import { Session } from './resources';

/** Fields of REST's `Session` that session.json leaves out, and why. */
export const ARCHIVE_LEFT_OUT = {
  // The archive path names the project and the session (`projects/<id>/sessions/<id>/`).
  id: true,
  clientId: true,
  projectId: true,
  // The files carry them: their sizes are in the manifest.
  markdownSize: true,
  rawDataSize: true,
  sessionDataSize: true,
} as const;

const ISO = z.iso.datetime({ offset: true });

/** A stored finding (src/domain/redaction.ts): kept as stored, so that an import restores it exactly. */
const RedactionJsonSchema = z.strictObject({
  rule: z.string().min(1).max(100),
  count: z.int().min(0),
  part: z.literal('sessionData').optional(),
  reported: z.literal(true).optional(),
});

/**
 * Unknown fields are ignored (z.object, not strict): a later version may add some. A field of
 * `Session` is optional here unless restated below, so an archive written before it was added
 * still imports (an import computes such a field again from the content, as an upload does).
 */
export const SessionJsonSchema = z.object({
  ...Session.omit(ARCHIVE_LEFT_OUT).partial().shape,
  name: Session.shape.name,
  // The archive's own forms of REST's fields.
  userTitle: z.string().max(4000).nullable(),
  startedAt: ISO,
  endedAt: ISO,
  createdAt: ISO,
  updatedAt: ISO,
  /** Required: an import keeps a well-formed tag when the content is the archive's byte for byte. */
  etag: z.string().max(80),
  /** Every metadata field but `tags` (top level), extra keys included. */
  metadata: z.record(z.string(), z.union([z.string(), z.array(z.string()), z.null()])),
  /** The uploader's email (ids differ between servers); null when unknown. */
  uploadedBy: z.string().nullable().default(null),
  /** Every stored finding, with its part and mode (REST shows only rule and count). */
  redactions: z.array(RedactionJsonSchema).max(500),
  // Only in the archive.
  tags: z.array(z.string()),
});

export type SessionJson = z.output<typeof SessionJsonSchema>;
export type RedactionJson = z.output<typeof RedactionJsonSchema>;
