import path from 'node:path';
import { defineConfig } from 'prisma/config';

// The schema engine cannot be downloaded on our build machines. `prisma generate` needs
// none, so point the CLI at a stub unless a real engine is configured; migrations are applied
// by src/db/migrate.ts, which records them in _prisma_migrations exactly as Prisma does.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.join(__dirname, 'scripts', 'schema-engine-stub.sh');

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: {
    url: process.env.DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/session_archive',
  },
});
