import path from 'node:path';

/** The repository's root, for tests that read its files or run its binaries. */
export const ROOT = path.resolve(__dirname, '..', '..');
/** Shared fixture files (client-written bodies and logs), kept byte for byte. */
export const FIXTURES = path.join(ROOT, 'test', 'fixtures');
