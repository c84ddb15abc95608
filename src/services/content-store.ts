/**
 * The content store as the operator reaches it (the admin CLI's `content migrate` and `content
 * sweep`): the storage modules live in src/data/content-store; the doors reach them through here.
 */
export { openContentStore, type ContentStore } from '../data/content-store';
export { migrateContent, type MigrateProgress } from '../data/content-store/migrate';
export { sweepObjects, SWEEP_GRACE_MS } from '../data/content-store/sweep';
