/**
 * A real S3-protocol server for tests: s3rver on a free port, its objects in a temporary directory
 * removed on close (and at process exit, should close never run). Never a mocked client.
 *
 * TEST_CONTENT_STORE=s3 runs the suites on it: global setup starts one for the run
 * (SA_TEST_S3_ENDPOINT), and startTestApp gives every test database a bucket of its own there and
 * CONTENT_STORE=s3.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

/** s3rver's fixed credentials. */
export const S3RVER_KEY = 'S3RVER';

export interface TestS3 {
  endpoint: string;
  dir: string;
  close(): Promise<void>;
}

const dirs = new Set<string>();
let exitHook = false;

export async function startS3rver(): Promise<TestS3> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-s3rver-'));
  dirs.add(dir);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    });
  }
  const server = new S3rver({ address: '127.0.0.1', port: 0, directory: dir, silent: true });
  let addr;
  try {
    addr = await server.run();
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    dirs.delete(dir);
    throw err;
  }
  return {
    endpoint: `http://127.0.0.1:${addr.port}`,
    dir,
    async close() {
      server.httpServer?.closeAllConnections();
      await server.close().catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
      dirs.delete(dir);
    },
  };
}

/** The environment of a service using `bucket` at `endpoint` (s3rver wants path-style requests and no CRC32 checksums). */
export function s3Env(endpoint: string, bucket: string, contentStore: 's3' | 'db' = 's3'): Record<string, string> {
  return {
    CONTENT_STORE: contentStore,
    S3_ENDPOINT: endpoint,
    S3_BUCKET: bucket,
    S3_REGION: 'us-east-1',
    S3_ACCESS_KEY_ID: S3RVER_KEY,
    S3_SECRET_ACCESS_KEY: S3RVER_KEY,
    S3_FORCE_PATH_STYLE: 'true',
    S3_CHECKSUMS: 'when_required',
  };
}

/** Creates the bucket (an existing one is fine). */
export async function createBucket(endpoint: string, bucket: string): Promise<void> {
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: S3RVER_KEY, secretAccessKey: S3RVER_KEY },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (err) {
    const name = (err as { name?: string }).name;
    if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw err;
  } finally {
    client.destroy();
  }
}

/** A bucket name for a test database (bucket names: lower case, digits, hyphens). */
export const bucketFor = (dbName: string): string =>
  dbName
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 63);

/** The suites run on S3 (TEST_CONTENT_STORE=s3)? */
export const testContentStore = (): 'db' | 's3' => (process.env.TEST_CONTENT_STORE === 's3' ? 's3' : 'db');

/**
 * The environment that puts a test database's content on the run's s3rver (a bucket of its own),
 * when the run asks for it; {} otherwise.
 */
export async function matrixStoreEnv(dbName: string): Promise<Record<string, string>> {
  if (testContentStore() !== 's3') return {};
  const endpoint = process.env.SA_TEST_S3_ENDPOINT;
  if (!endpoint) throw new Error('TEST_CONTENT_STORE=s3 but no s3rver was started (test/support/global-setup.ts)');
  const bucket = bucketFor(dbName);
  await createBucket(endpoint, bucket);
  return s3Env(endpoint, bucket);
}

const KEY = '__sessionArchiveTestS3';

/** Global setup: one s3rver for the run when TEST_CONTENT_STORE=s3. */
export async function startRunS3(): Promise<void> {
  if (testContentStore() !== 's3' || process.env.SA_TEST_S3_ENDPOINT) return;
  const s3 = await startS3rver();
  (globalThis as Record<string, unknown>)[KEY] = s3;
  process.env.SA_TEST_S3_ENDPOINT = s3.endpoint;
}

export async function stopRunS3(): Promise<void> {
  const s3 = (globalThis as Record<string, unknown>)[KEY] as TestS3 | undefined;
  if (s3) await s3.close();
}
