import { useUtcClock } from '../../src/db/client';

// Jest's setupFiles: each test file's process keeps its clock in UTC, as the service's entry points do.
useUtcClock();
