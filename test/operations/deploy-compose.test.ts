/**
 * deploy/compose.yaml, the documented production layout, cannot be started here (no container
 * engine), so what can drift is checked instead: the service's environment names only variables
 * the service reads, is a valid configuration once the secrets are filled in, and every host it
 * names is a service of the file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config';
import { CONFIG_VARIABLES } from '../../src/config-variables';
import { ROOT } from '../support/paths';

interface Compose {
  services: Record<string, { environment?: Record<string, string>; depends_on?: Record<string, unknown> }>;
}

const compose = parse(fs.readFileSync(path.resolve(ROOT, 'deploy/compose.yaml'), 'utf8'), { merge: true }) as Compose;
const app = compose.services.app;
/** What an operator's env file gives beyond random secrets. */
const OPERATOR_VALUES: Record<string, string> = { PUBLIC_URL: 'https://archive.example.com' };
/**
 * `${NAME}` and `${NAME:?message}` filled in as an operator's env file would (a secret, or the value
 * above); `${NAME:-default}` left out of it, as compose does: the default.
 */
const filled = Object.fromEntries(
  Object.entries(app.environment ?? {}).map(([k, v]) => [
    k,
    String(v).replace(/\$\{([A-Z_]+)(?::\?[^}]*|:-([^}]*))?\}/g, (_, name: string, fallback?: string) =>
      fallback !== undefined ? fallback : (OPERATOR_VALUES[name] ?? `${name.toLowerCase()}-0123456789abcdef`),
    ),
  ]),
);

test("the app's environment names only variables the service reads", () => {
  expect(Object.keys(filled).filter((k) => !CONFIG_VARIABLES.includes(k))).toEqual([]);
});

test('with its secrets filled in, the environment is a valid configuration of the layout it describes', () => {
  const config = loadConfig(filled);
  expect(config.contentStore).toBe('s3');
  expect(config.databaseReplicaUrl).not.toBeNull();
  expect(config.meiliUrls).toHaveLength(2);
  expect(config.meiliStandbyUrls).toHaveLength(2);
  expect(config.publicUrl).toBe('https://archive.example.com');
});

test('every host the app is pointed at, and everything it depends on, is a service of the file', () => {
  const urls = ['DATABASE_URL', 'DATABASE_REPLICA_URL', 'S3_ENDPOINT', 'REDIS_URL'].map((k) => filled[k]);
  urls.push(...filled.MEILI_URLS.split(','), ...filled.MEILI_STANDBY_URLS.split(','));
  const hosts = urls.map((u) => new URL(u).hostname);
  const services = Object.keys(compose.services);
  expect(hosts.filter((h) => !services.includes(h))).toEqual([]);
  expect(Object.keys(app.depends_on ?? {}).filter((s) => !services.includes(s))).toEqual([]);
});
