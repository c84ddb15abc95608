/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test', '<rootDir>/src'],
  testMatch: ['**/*.test.ts'],
  transform: {
    // Type checking is `npm run typecheck`'s job; under jest everything is plain CommonJS, so that
    // dynamic import() (Prisma loads its query compiler that way) becomes require().
    '^.+\\.ts$': [
      'ts-jest',
      { tsconfig: { module: 'commonjs', moduleResolution: 'node10', esModuleInterop: true, target: 'ES2022', isolatedModules: true }, diagnostics: false },
    ],
    // meilisearch and cookie ship ESM only; jest runs CommonJS, so they are transpiled on the fly.
    '^.+\\.js$': ['ts-jest', { tsconfig: { allowJs: true, module: 'commonjs', esModuleInterop: true }, diagnostics: false }],
  },
  // Generated code imports './x.js' for './x.ts' (ESM-style specifiers).
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transformIgnorePatterns: ['/node_modules/(?!(meilisearch|cookie)/)'],
  // Every test process keeps its clock in UTC, as the service's entry points do (src/db/client.ts).
  setupFiles: ['<rootDir>/test/support/utc-clock.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60000,
  maxWorkers: 2,
  // Each test file loads the modules again in its worker. A worker's heap used to grow by ~30 MB
  // per file, to ~3 GB by the end of a full run: each file's modules stayed reachable through
  // what a stopped app left running (prom-client's GC observer, the in-memory rate limits' expiry
  // timers; both mended). Now a worker holds 74–390 MB after each file of a full run. A worker
  // over 1 GB after a file is still replaced before the next, should a file leave its modules
  // reachable again (`--logHeapUsage` prints each file's heap).
  workerIdleMemoryLimit: '1GB',
  // At the end of a run a worker's event loop is empty and its `exit` event fires within 1 ms of
  // jest's end message (measured), but a large process can take most of a second to be gone on a
  // busy machine (one of a GB or more did), past jest's 500 ms, which jest then reports as "failed
  // to exit gracefully". A worker that a leaked timer or socket keeps alive is still reported,
  // after 5 s.
  workerGracefulExitTimeout: 5000,
};
