/**
 * Content objects in an S3-compatible bucket (CONTENT_STORE=s3). Objects are written once under a
 * key of their own and never overwritten, so a key read from the database names one version for
 * as long as the object exists; deletion is the content sweep's (./sweep.ts).
 */
import type { Readable } from 'node:stream';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { S3Config } from '../../config';

/** Above this many bytes an object is written as a multipart upload, in parts of this size. */
export const MULTIPART_BYTES = 8 * 1024 * 1024;

export interface ListedObject {
  key: string;
  size: number;
  lastModified: Date;
}

export interface ObjectStore {
  readonly bucket: string;
  /** Fails with a message naming the bucket when it does not exist or cannot be reached. */
  checkBucket(): Promise<void>;
  put(key: string, body: Buffer): Promise<void>;
  get(key: string): Promise<Buffer>;
  /** Bytes [start, end) (fewer past the object's end). */
  getRange(key: string, start: number, end: number): Promise<Buffer>;
  /** The object as it arrives, for streaming: the caller's pace pauses the download. */
  stream(key: string): AsyncGenerator<Buffer>;
  /** Every object under the prefix, a page at a time. */
  list(prefix: string): AsyncGenerator<ListedObject[]>;
  delete(keys: readonly string[]): Promise<void>;
  close(): void;
}

export class BucketMissingError extends Error {}

function statusOf(err: unknown): number | undefined {
  return err instanceof S3ServiceException ? err.$metadata.httpStatusCode : (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

export function createS3Store(config: S3Config): ObjectStore {
  const checksums = config.checksums === 'when_required' ? 'WHEN_REQUIRED' : 'WHEN_SUPPORTED';
  const client = new S3Client({
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    region: config.region,
    forcePathStyle: config.forcePathStyle,
    ...(config.accessKeyId && config.secretAccessKey ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } } : {}),
    requestChecksumCalculation: checksums,
    responseChecksumValidation: checksums,
  });
  const Bucket = config.bucket;
  const where = `S3 bucket "${Bucket}"${config.endpoint ? ` at ${config.endpoint}` : ''}`;

  const bodyOf = async (key: string, range?: string): Promise<Readable> => {
    const res = await client.send(new GetObjectCommand({ Bucket, Key: key, ...(range ? { Range: range } : {}) }));
    return res.Body as Readable;
  };
  const collect = async (body: Readable): Promise<Buffer> => {
    const parts: Buffer[] = [];
    for await (const c of body) parts.push(c as Buffer);
    return parts.length === 1 ? parts[0] : Buffer.concat(parts);
  };

  return {
    bucket: Bucket,
    async checkBucket() {
      try {
        await client.send(new HeadBucketCommand({ Bucket }));
      } catch (err) {
        const status = statusOf(err);
        if (status === 404) throw new BucketMissingError(`${where} does not exist: create it first (CONTENT_STORE=s3 never creates buckets)`);
        if (status === 403) throw new BucketMissingError(`${where} refused access (403): check S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY and the bucket policy`);
        throw new BucketMissingError(`${where} could not be reached: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
    async put(key, body) {
      if (body.length <= MULTIPART_BYTES) {
        await client.send(new PutObjectCommand({ Bucket, Key: key, Body: body, ContentLength: body.length }));
        return;
      }
      await new Upload({ client, params: { Bucket, Key: key, Body: body }, partSize: MULTIPART_BYTES, queueSize: 4, leavePartsOnError: false }).done();
    },
    async get(key) {
      return collect(await bodyOf(key));
    },
    async getRange(key, start, end) {
      if (end <= start) return Buffer.alloc(0);
      try {
        return await collect(await bodyOf(key, `bytes=${start}-${end - 1}`));
      } catch (err) {
        // A range starting past the end: nothing there (the database's sizes say how long it is).
        if (statusOf(err) === 416) return Buffer.alloc(0);
        throw err;
      }
    },
    async *stream(key) {
      const body = await bodyOf(key);
      try {
        for await (const c of body) yield c as Buffer;
      } finally {
        body.destroy();
      }
    },
    async *list(prefix) {
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix: prefix, ContinuationToken }));
        yield (page.Contents ?? [])
          .filter((o) => o.Key)
          .map((o) => ({ key: o.Key!, size: Number(o.Size ?? 0), lastModified: o.LastModified ?? new Date(0) }));
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
    },
    async delete(keys) {
      for (let i = 0; i < keys.length; i += 1000) {
        const batch = keys.slice(i, i + 1000);
        const res = await client.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }));
        const failed = (res.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
        if (failed.length) throw new Error(`S3 delete failed for ${failed.length} object(s): ${failed[0].Code ?? ''} ${failed[0].Message ?? ''}`.trim());
      }
    },
    close() {
      client.destroy();
    },
  };
}
