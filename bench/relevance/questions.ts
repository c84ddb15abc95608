/**
 * Questions asked of the fixture's sessions, the way a person or an agent asks weeks later, each
 * with the session (sessions/<id>.md) that answers it. Four kinds:
 * - plain: a question in plain language, in the asker's own words;
 * - keyword: a few words typed into a search box;
 * - identifier: an identifier, file, error code or error message, as written;
 * - agent: a long question a coding agent asks before it starts a task.
 */
export type QuestionKind = 'plain' | 'keyword' | 'identifier' | 'agent';

export interface Question {
  kind: QuestionKind;
  q: string;
  /** The session that answers it. */
  expect: string;
}

const of = (kind: QuestionKind, pairs: Array<[string, string]>): Question[] => pairs.map(([q, expect]) => ({ kind, q, expect }));

export const QUESTIONS: Question[] = [
  ...of('plain', [
    ['what did we decide about rate limiting', 'rate-limit-public-api'],
    ['how do we handle stripe retrying webhooks', 'stripe-webhook-duplicates'],
    ['how did we stop the login redirect from looping?', 'login-redirect-loop'],
    ['how should I rename a database column without taking the site down', 'rename-column-zero-downtime'],
    ['why did the nav bar stop sticking on the iphone', 'sticky-header-safari'],
    ['why was that test only failing at night in CI', 'flaky-test-midnight-utc'],
    ['how did we make the docker image smaller', 'docker-image-size'],
    ['what was the root cause of the checkout outage', 'large-checkout-outage-review'],
    ['how did we fix the dashboard freezing with lots of data points', 'large-dashboard-charts'],
    ['did we go with launchdarkly or build our own flags', 'feature-flags-decision'],
    ['why did people get their reminders an hour early', 'reminders-time-zones'],
    ['how do we keep the cron job from running on both replicas', 'cron-runs-twice'],
    ['why were our emails going to spam', 'spam-password-reset-emails'],
    ['how did we speed up the catalogue import', 'bulk-import-million-rows'],
    ['why was the price still old after changing it in the admin', 'stale-cache-after-update'],
    ['how are we versioning the api for breaking changes', 'api-versioning-decision'],
    ['what did we do about the white flash when dark mode loads', 'dark-mode-flash'],
    ['how did we get invoice pdfs working in docker with the right fonts', 'large-billing-pairing'],
    ['why does the websocket keep disconnecting in production', 'websocket-idle-disconnect'],
    ['how did we get rid of the hundreds of sql queries in graphql', 'graphql-dataloader'],
  ]),
  ...of('keyword', [
    ['stripe webhook retries', 'stripe-webhook-duplicates'],
    ['api throttling per key', 'rate-limit-public-api'],
    ['expand contract migration', 'rename-column-zero-downtime'],
    ['presigned url upload 403', 's3-presigned-uploads'],
    ['composite index slow query', 'slow-orders-query-index'],
    ['heap snapshot memory leak', 'memory-leak-listeners'],
    ['csv excel encoding', 'csv-export-excel-umlauts'],
    ['keyset pagination cursor', 'keyset-pagination'],
    ['git reflog', 'git-reflog-lost-commits'],
    ['eslint prettier conflict', 'eslint-prettier-conflict'],
    ['useEffect loop', 'useeffect-infinite-loop'],
    ['hydration mismatch', 'hydration-mismatch'],
    ['nginx upload limit', 'payload-too-large-upload'],
    ['pino redact', 'redact-emails-from-logs'],
    ['sentry sourcemaps', 'sentry-source-maps'],
    ['3d secure', 'stripe-3ds-requires-action'],
    ['github webhook hmac', 'github-webhook-signature'],
    ['vite env variables', 'large-vite-migration'],
    ['content security policy nonce', 'large-hardening-week'],
    ['msw fetch mock', 'node20-fetch-nock'],
    // Another form of the session's words: debounce, throttle, rotating, deadlocks, leak, duplicate.
    ['debounced requests', 'search-box-debounce'],
    ['throttled requests per key', 'rate-limit-public-api'],
    ['rotated tokens', 'refresh-token-rotation'],
    ['deadlocked transfer', 'mysql-deadlock-transfer'],
    ['leaking memory', 'memory-leak-listeners'],
    ['duplicated events', 'stripe-webhook-duplicates'],
  ]),
  ...of('identifier', [
    ['retryWithBackoff', 'retry-with-backoff-helper'],
    ['retry backoff', 'retry-with-backoff-helper'],
    ['ECONNRESET', 'econnreset-payment-gateway'],
    ['Cannot read properties of undefined', 'cannot-read-properties-map'],
    ['body.ts', 'request-body-parsing-refactor'],
    ['src/http/body.ts', 'request-body-parsing-refactor'],
    ['SignatureDoesNotMatch', 's3-presigned-uploads'],
    ['EADDRINUSE', 'eaddrinuse-parallel-jest'],
    ['MaxListenersExceededWarning', 'memory-leak-listeners'],
    ['ER_LOCK_DEADLOCK', 'mysql-deadlock-transfer'],
    ['client_max_body_size', 'payload-too-large-upload'],
    ['max-retry-count', 'yaml-kebab-config-ignored'],
    ['req.session.user', 'req-session-user-undefined'],
    ['toCamelCase', 'snake-case-columns-mapping'],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'expired-tls-certificate'],
    ['OOMKilled exit code 137', 'pods-oomkilled'],
    ["Cannot find module '@lib/db'", 'ts-path-aliases-runtime'],
    ['cl_waiting', 'large-checkout-outage-review'],
    ['requires_action', 'stripe-3ds-requires-action'],
    ['X-Hub-Signature-256', 'github-webhook-signature'],
    // Parts of a camelCase identifier, as words: releaseIfOwner, timingSafeEqual, startTestServer, …
    ['release owner lock', 'cron-runs-twice'],
    ['timing safe equal', 'github-webhook-signature'],
    ['test server start', 'eaddrinuse-parallel-jest'],
    ['limit bytes', 'request-body-parsing-refactor'],
    ['user by id', 'graphql-dataloader'],
    ['family id', 'refresh-token-rotation'],
    ['payment intent', 'stripe-3ds-requires-action'],
    ['csp nonce', 'large-hardening-week'],
  ]),
  ...of('agent', [
    [
      'I am adding an outbound call to a payment provider. What did we learn about connections being reset by the remote side, and which http agent settings changed?',
      'econnreset-payment-gateway',
    ],
    [
      'Before I touch the webhook handler: how does our Stripe integration deal with the same event being delivered more than once, and where is that stored?',
      'stripe-webhook-duplicates',
    ],
    [
      'User is sent back to the sign-in page after authenticating on staging behind the load balancer. Have we seen this before and what fixed it?',
      'login-redirect-loop',
    ],
    [
      'I need to throttle a new endpoint. What algorithm, limits and response headers did the team agree on for API keys, and what if Redis is unavailable?',
      'rate-limit-public-api',
    ],
    [
      'Jest integration tests randomly fail with a port already in use error when run in parallel; what approach did we take for test servers?',
      'eaddrinuse-parallel-jest',
    ],
    [
      'We are renaming a column of the accounts table. What is our process for schema changes that must not break pods still running the old version?',
      'rename-column-zero-downtime',
    ],
    [
      'A React component throws because data is undefined on first render before the query resolves. Is there a previous fix and a compiler option we enabled?',
      'cannot-read-properties-map',
    ],
    [
      'Task: add retries around the geocoding call. Is there an existing shared utility for retrying with exponential delays that I should reuse instead of writing a loop?',
      'retry-with-backoff-helper',
    ],
    ['Users in Germany see ambiguous dates. Find earlier work on locale-aware date formatting helpers in the frontend and invoices.', 'german-date-format'],
    ['Background job sending mail: which queue library do we use, and how are attempts and backoff configured for failing jobs?', 'bullmq-email-queue'],
    ['I am adding a scheduled task to the API. Production runs multiple replicas: how did we prevent scheduled jobs from executing twice?', 'cron-runs-twice'],
    [
      'Find prior discussion of a checkout incident where requests queued waiting for database connections; what were the action items?',
      'large-checkout-outage-review',
    ],
    [
      'The browser reports a preflight failure for PATCH requests with credentials from the admin frontend. What CORS configuration did we settle on?',
      'cors-preflight-put',
    ],
    ['Need to store refresh tokens for the mobile client. What scheme did we design for rotation and for detecting stolen tokens?', 'refresh-token-rotation'],
    [
      'Deep pages of a list endpoint are slow with limit and offset. Did we already replace offset pagination somewhere, and how are cursors encoded?',
      'keyset-pagination',
    ],
    ["Mobile Safari: a full height panel's bottom button is hidden under the toolbar. What CSS did we use last time?", 'iphone-100vh-bottom-hidden'],
    ['Generating PDF documents server side: what replaced wkhtmltopdf, and how did we fix missing glyphs in the container?', 'large-billing-pairing'],
    ["We call an LLM API in a batch job and get throttled. What did we do previously to respect the provider's limits?", 'openai-429-retry-after'],
    [
      'A setting in the YAML config file seems to have no effect. Was there an earlier issue with key naming in the config loader?',
      'yaml-kebab-config-ignored',
    ],
    ['What CSP setup do we have for inline scripts, and how were nonces added to the templates?', 'large-hardening-week'],
  ]),
];
