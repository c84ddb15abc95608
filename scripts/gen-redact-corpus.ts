/**
 * Builds the labelled redaction corpus (test/redact/corpus.json) deterministically: fake but
 * correctly shaped secrets from a seeded generator (never real ones), each in a few contexts
 * (prose, shell, code, config, logs), and hard negatives that must be left alone.
 *
 *   npx tsx scripts/gen-redact-corpus.ts          # rewrite test/redact/corpus.json
 *
 * test/redact/redact-corpus.test.ts checks the file equals what this script builds.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface Positive {
  id: string;
  format: string;
  /** `prefixed`: the secret's own shape says what it is; `contextual`: its surroundings do. */
  kind: 'prefixed' | 'contextual';
  text: string;
  /** The exact substring that must not survive. */
  secret: string;
}

export interface Negative {
  id: string;
  format: string;
  text: string;
}

export interface Corpus {
  positives: Positive[];
  negatives: Negative[];
}

const PER_FORMAT = 10;
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;
const HEX = '0123456789abcdef';
const B64URL = ALNUM + '_-';
const B64 = ALNUM + '+/';

function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    // xorshift32
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

type Rand = () => number;
const pick = (r: Rand, chars: string, n: number) => Array.from({ length: n }, () => chars[Math.floor(r() * chars.length)]).join('');
/** Random characters with at least one letter and one digit (as real keys nearly always have). */
const mixed = (r: Rand, chars: string, n: number) => {
  for (;;) {
    const s = pick(r, chars, n);
    if (/[A-Za-z]/.test(s) && /[0-9]/.test(s)) return s;
  }
};
const b64url = (s: string) => Buffer.from(s).toString('base64url');

/** Secret generators per format. */
const PREFIXED: Record<string, (r: Rand) => string> = {
  'aws-access-key': (r) => 'AKIA' + mixed(r, UPPER + DIGITS, 16),
  'aws-sts-key': (r) => 'ASIA' + mixed(r, UPPER + DIGITS, 16),
  'gcp-api-key': (r) => 'AIza' + mixed(r, B64URL, 35),
  'alibaba-access-key': (r) => 'LTAI' + mixed(r, ALNUM, 20),
  'digitalocean-token': (r) => 'dop_v1_' + mixed(r, HEX, 64),
  'azure-ad-secret': (r) => mixed(r, ALNUM, 3) + pick(r, DIGITS, 1) + 'Q~' + mixed(r, ALNUM + '_~.-', 34),
  'databricks-token': (r) => 'dapi' + mixed(r, HEX, 32),
  'vault-token': (r) => 'hvs.' + mixed(r, B64URL, 95),
  'terraform-token': (r) => mixed(r, LOWER + DIGITS, 14) + '.atlasv1.' + mixed(r, ALNUM, 67),
  'doppler-token': (r) => 'dp.pt.' + mixed(r, ALNUM, 43),
  'pulumi-token': (r) => 'pul-' + mixed(r, HEX, 40),
  'supabase-token': (r) => 'sbp_' + mixed(r, HEX, 40),
  'newrelic-key': (r) => 'NRAK-' + mixed(r, UPPER + DIGITS, 27),
  'grafana-token': (r) => 'glsa_' + mixed(r, ALNUM, 32) + '_' + pick(r, HEX, 8),
  'anthropic-key': (r) => 'sk-ant-api03-' + mixed(r, B64URL, 93) + 'AA',
  'openai-key': (r) => 'sk-proj-' + mixed(r, B64URL, 74) + 'T3BlbkFJ' + mixed(r, B64URL, 74),
  'openai-legacy-key': (r) => 'sk-' + mixed(r, ALNUM, 48),
  'huggingface-token': (r) => 'hf_' + mixed(r, ALNUM, 34),
  'groq-key': (r) => 'gsk_' + mixed(r, ALNUM, 52),
  'xai-key': (r) => 'xai-' + mixed(r, ALNUM, 80),
  'replicate-token': (r) => 'r8_' + mixed(r, ALNUM, 37),
  'perplexity-key': (r) => 'pplx-' + mixed(r, ALNUM, 48),
  'github-pat': (r) => 'ghp_' + mixed(r, ALNUM, 36),
  'github-oauth': (r) => 'gho_' + mixed(r, ALNUM, 36),
  'github-fine-grained': (r) => 'github_pat_11' + mixed(r, UPPER + DIGITS, 20) + '_' + mixed(r, ALNUM, 59),
  'gitlab-pat': (r) => 'glpat-' + mixed(r, B64URL, 20),
  'atlassian-token': (r) => 'ATATT3' + mixed(r, ALNUM + '_-', 186),
  'stripe-secret': (r) => 'sk_live_' + mixed(r, ALNUM, 99),
  'stripe-restricted': (r) => 'rk_test_' + mixed(r, ALNUM, 24),
  'stripe-webhook': (r) => 'whsec_' + mixed(r, ALNUM, 32),
  'square-token': (r) => 'sq0atp-' + mixed(r, B64URL, 22),
  'slack-bot-token': (r) => `xoxb-${pick(r, DIGITS, 12)}-${pick(r, DIGITS, 13)}-${mixed(r, ALNUM, 24)}`,
  'slack-webhook': (r) => `https://hooks.slack.com/services/T${mixed(r, UPPER + DIGITS, 8)}/B${mixed(r, UPPER + DIGITS, 10)}/${mixed(r, ALNUM, 24)}`,
  'discord-webhook': (r) => `https://discord.com/api/webhooks/${pick(r, '123456789', 1)}${pick(r, DIGITS, 17)}/${mixed(r, B64URL, 68)}`,
  'telegram-bot-token': (r) => `${pick(r, '123456789', 1)}${pick(r, DIGITS, 8)}:AA${mixed(r, B64URL, 33)}`,
  'twilio-key': (r) => 'SK' + mixed(r, HEX, 32),
  'sendgrid-key': (r) => 'SG.' + mixed(r, B64URL, 22) + '.' + mixed(r, B64URL, 43),
  'mailgun-key': (r) => 'key-' + mixed(r, HEX, 32),
  'mailchimp-key': (r) => mixed(r, HEX, 32) + '-us' + pick(r, '123456789', 1) + pick(r, DIGITS, 1),
  'postman-key': (r) => 'PMAK-' + mixed(r, HEX, 24) + '-' + mixed(r, HEX, 34),
  'linear-key': (r) => 'lin_api_' + mixed(r, ALNUM, 40),
  'notion-token': (r) => 'ntn_' + pick(r, DIGITS, 11) + mixed(r, ALNUM, 35),
  'shopify-token': (r) => 'shpat_' + mixed(r, HEX, 32),
  'npm-token': (r) => 'npm_' + mixed(r, ALNUM, 36),
  'pypi-token': (r) => 'pypi-AgEIcHlwaS5vcmc' + mixed(r, B64URL, 70),
  'rubygems-token': (r) => 'rubygems_' + mixed(r, HEX, 48),
  'dockerhub-token': (r) => 'dckr_pat_' + mixed(r, B64URL, 27),
  'age-secret-key': (r) => 'AGE-SECRET-KEY-1' + pick(r, 'QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L', 58),
  jwt: (r) =>
    `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify({ sub: pick(r, DIGITS, 10), name: pick(r, LOWER, 8), iat: 1700000000 + Math.floor(r() * 1e6) }))}.${mixed(r, B64URL, 43)}`,
  'pem-rsa-private-key': (r) => pem('RSA PRIVATE KEY', r, 12),
  'pem-openssh-private-key': (r) => pem('OPENSSH PRIVATE KEY', r, 7),
  'pem-pkcs8-private-key': (r) => pem('PRIVATE KEY', r, 6),
  'pem-ec-private-key': (r) => pem('EC PRIVATE KEY', r, 3),
};

function pem(label: string, r: Rand, lines: number): string {
  const body = Array.from({ length: lines }, () => mixed(r, B64, 64)).join('\n');
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----`;
}

/** Contexts a prefixed secret appears in. */
const PREFIXED_CONTEXTS: Array<(s: string) => string> = [
  (s) => `Here is the key you asked about: ${s} — please rotate it after the demo.`,
  (s) => `$ export SERVICE_CREDENTIAL=${s}`,
  (s) => `const client = new Client({ auth: "${s}" });`,
  (s) => `settings:\n  upstream: ${s}\n  retries: 3`,
  (s) => `[debug] loaded credential ${s} from keychain`,
  (s) => `| prod | ${s} | active |`,
  (s) => `curl -s https://api.example.com/v1/items -d 'k=${s}'`,
  (s) => `{"config": {"value": "${s}"}}`,
  (s) => `> ${s}`,
  (s) => `Using ${s}\nfor the deploy job.`,
];

/** Contextual formats: a generator of [text, secret]. */
const CONTEXTUAL: Record<string, (r: Rand, i: number) => [string, string]> = {
  'env-secret': (r, i) => {
    const v = mixed(r, ALNUM + '+/', 32 + (i % 9));
    return [[`APP_SECRET=${v}`, `export JWT_SECRET="${v}"`, `SESSION_SECRET='${v}'`][i % 3], v];
  },
  'env-password': (r, i) => {
    const v = mixed(r, ALNUM + '!#%^', 10 + (i % 6));
    return [[`DB_PASSWORD=${v}`, `export POSTGRES_PASSWORD=${v}`, `MYSQL_ROOT_PASSWORD="${v}"`][i % 3], v];
  },
  'env-api-key': (r, i) => {
    const v = mixed(r, ALNUM, 32);
    return [[`OPENWEATHER_API_KEY=${v}`, `export ALGOLIA_API_KEY=${v}`, `MAPS_APIKEY="${v}"`][i % 3], v];
  },
  'env-token': (r, i) => {
    const v = mixed(r, ALNUM + '-_', 40);
    return [[`CLOUDFLARE_API_TOKEN=${v}`, `export VERCEL_TOKEN=${v}`, `HEROKU_AUTH_TOKEN="${v}"`][i % 3], v];
  },
  'aws-secret-access-key': (r, i) => {
    const v = mixed(r, ALNUM + '+/', 40);
    return [[`aws_secret_access_key = ${v}`, `AWS_SECRET_ACCESS_KEY=${v}`, `"SecretAccessKey": "${v}"`][i % 3], v];
  },
  'yaml-password': (r, i) => {
    const v = mixed(r, ALNUM + '@$!', 14);
    return [[`database:\n  user: app\n  password: ${v}\n`, `redis:\n  password: "${v}"`, `smtp:\n  pass: ${v}`][i % 3], v];
  },
  'json-password': (r, i) => {
    const v = mixed(r, ALNUM + '!@#', 12 + (i % 5));
    return [[`{"username": "deploy", "password": "${v}"}`, `{"user":{"passwd":"${v}"}}`, `{ "adminPassword": "${v}" }`][i % 3], v];
  },
  'json-client-secret': (r, i) => {
    const v = mixed(r, ALNUM + '-_', 36);
    return [[`{"client_id": "web-app", "client_secret": "${v}"}`, `{"clientSecret":"${v}"}`, `"oauth": {"secret": "${v}"}`][i % 3], v];
  },
  'code-api-key': (r, i) => {
    const v = mixed(r, ALNUM, 32);
    return [[`api_key = "${v}"`, `const apiKey = '${v}';`, `client = Client(api_key="${v}")`][i % 3], v];
  },
  'code-token': (r, i) => {
    const v = mixed(r, ALNUM + '._-', 48);
    return [[`auth_token = "${v}"`, `let accessToken = "${v}";`, `headers["X-Auth-Token"] = "${v}"`][i % 3], v];
  },
  'url-credentials-postgres': (r, i) => {
    const v = mixed(r, ALNUM, 16);
    return [
      [
        `DATABASE_URL=postgres://app:${v}@db.internal:5432/app`,
        `psql "postgresql://admin:${v}@10.0.0.5/prod"`,
        `url: postgres://reporter:${v}@replica.example.net/stats`,
      ][i % 3],
      v,
    ];
  },
  'url-credentials-mongodb': (r, i) => {
    const v = mixed(r, ALNUM, 20);
    return [
      [
        `MONGO_URI=mongodb+srv://svc:${v}@cluster0.ab1cd.mongodb.net/db`,
        `mongodb://root:${v}@localhost:27017/admin`,
        `"uri": "mongodb+srv://app:${v}@c.mongodb.net"`,
      ][i % 3],
      v,
    ];
  },
  'url-credentials-redis-amqp': (r, i) => {
    const v = mixed(r, ALNUM, 24);
    return [[`REDIS_URL=redis://:${v}@cache:6379/0`, `amqp://guest:${v}@rabbit:5672/`, `https://deploy:${v}@git.example.com/org/repo.git`][i % 3], v];
  },
  'connection-string-ado': (r, i) => {
    const v = mixed(r, ALNUM + '!', 14);
    return [
      [
        `Server=tcp:sql.example.net,1433;Database=app;User ID=sa;Password=${v};Encrypt=True;`,
        `"ConnectionString": "Host=db;Username=app;Password=${v}"`,
        `Data Source=.;Initial Catalog=x;User Id=u;Pwd=${v};`,
      ][i % 3],
      v,
    ];
  },
  'azure-storage-connection': (r, i) => {
    const v = mixed(r, B64, 86) + '==';
    return [
      [
        `DefaultEndpointsProtocol=https;AccountName=acct${i};AccountKey=${v};EndpointSuffix=core.windows.net`,
        `AZURE_STORAGE_KEY=${v}`,
        `"SharedAccessKey": "${v}"`,
      ][i % 3],
      v,
    ];
  },
  'authorization-bearer': (r, i) => {
    const v = mixed(r, ALNUM + '._-', 40);
    return [
      [`curl -H "Authorization: Bearer ${v}" https://api.example.com/me`, `Authorization: Bearer ${v}`, `{"headers": {"authorization": "Bearer ${v}"}}`][i % 3],
      v,
    ];
  },
  'authorization-basic': (r, i) => {
    const v = Buffer.from(`${pick(r, LOWER, 6)}:${mixed(r, ALNUM, 12)}`).toString('base64');
    return [[`Authorization: Basic ${v}`, `-H 'authorization: basic ${v}'`, `"Authorization": "Basic ${v}"`][i % 3], v];
  },
  'api-key-header': (r, i) => {
    const v = mixed(r, ALNUM, 32);
    return [[`X-API-Key: ${v}`, `-H "x-api-key: ${v}"`, `"X-Api-Key": "${v}"`][i % 3], v];
  },
  'cli-flag-password': (r, i) => {
    const v = mixed(r, ALNUM + '#%', 12);
    return [[`mysql --user=root --password=${v} app`, `docker login --username ci --password=${v}`, `./deploy.sh --token=${v}`][i % 3], v];
  },
  'query-param-token': (r, i) => {
    const v = mixed(r, ALNUM, 32);
    return [
      [`GET /callback?code=1&access_token=${v}&state=x`, `https://api.example.com/v2/data?api_key=${v}`, `wss://stream.example.com/feed?token=${v}`][i % 3],
      v,
    ];
  },
  'npmrc-auth-token': (r, i) => {
    const v = mixed(r, ALNUM + '-', 36);
    return [[`//registry.example.com/:_authToken=${v}`, `//npm.pkg.github.com/:_authToken=${v}`, `_authToken=${v}`][i % 3], v];
  },
  'ini-password': (r, i) => {
    const v = mixed(r, ALNUM + '!?', 12);
    return [[`[client]\nuser = backup\npassword = ${v}`, `[pypi]\nusername = __token__\npassword = ${v}`, `[smtp]\npassphrase = ${v}`][i % 3], v];
  },
  'python-kwarg-secret': (r, i) => {
    const v = mixed(r, ALNUM, 30);
    return [[`boto3.client("s3", aws_secret_access_key="${v}")`, `Flask(SECRET_KEY="${v}")`, `connect(host="db", password="${v}")`][i % 3], v];
  },
};

/** Hard negatives: shapes that must be left alone. */
const NEGATIVES: Record<string, (r: Rand, i: number) => string> = {
  uuid: (r) => `session 0e6a2d7c-${pick(r, HEX, 4)}-4${pick(r, HEX, 3)}-8${pick(r, HEX, 3)}-${pick(r, HEX, 12)} uploaded`,
  'git-sha': (r) => `commit ${pick(r, HEX, 40)}\nAuthor: Ada <ada@example.com>`,
  'short-sha': (r) => `fixed in ${pick(r, HEX, 7)} (see #${Math.floor(r() * 900 + 100)})`,
  sha256: (r) => `sha256sum: ${pick(r, HEX, 64)}  dist/app.tar.gz`,
  'image-digest': (r) => `image: ghcr.io/acme/api@sha256:${pick(r, HEX, 64)}`,
  'npm-integrity': (r) => `"integrity": "sha512-${pick(r, B64, 86)}=="`,
  etag: (r) => `ETag: W/"${pick(r, HEX, 40)}"`,
  'cache-key': (r) => `cache_key = "${pick(r, HEX, 64)}"`,
  'base64-image': (r) => `![chart](data:image/png;base64,iVBORw0KGgo${pick(r, B64, 300)}AKIA${pick(r, UPPER + DIGITS, 16)}${pick(r, B64, 40)}=)`,
  'ssh-public-key': (r) => `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${pick(r, B64, 43)} ada@laptop`,
  'pem-public-key': (r) => `-----BEGIN PUBLIC KEY-----\n${pick(r, B64, 64)}\n${pick(r, B64, 24)}\n-----END PUBLIC KEY-----`,
  'pem-certificate': (r) => `-----BEGIN CERTIFICATE-----\n${pick(r, B64, 64)}\n-----END CERTIFICATE-----`,
  'env-reference': (r, i) =>
    [`const apiKey = process.env.OPENAI_API_KEY;`, `token = os.environ["GITHUB_TOKEN"]`, `password: \${DB_PASSWORD}`, `SECRET_KEY=$SECRET_KEY`][i % 4],
  'code-identifiers': (r, i) =>
    [
      `const token = await getToken(user);`,
      `password: string;`,
      `def check_password(password: str) -> bool:`,
      `let apiKey = config.apiKey;`,
      `token = request.headers.authorization`,
      `primary_key = True`,
      `max_tokens=4096`,
      `"tokenizer": "cl100k_base"`,
      `sort_key: "createdAt"`,
      `if (secret == null) return;`,
    ][i % 10],
  placeholders: (r, i) =>
    [
      `OPENAI_API_KEY=your-api-key-here`,
      `export GITHUB_TOKEN=<your-token>`,
      `"password": "********"`,
      `api_key = "xxxxxxxxxxxxxxxxxxxx"`,
      `Authorization: Bearer $TOKEN`,
      `Authorization: Bearer <token>`,
      `postgres://user:\${PGPASSWORD}@localhost/db`,
      `password: changeme`,
    ][i % 8],
  'public-identifiers': (r, i) =>
    [
      `pk_live_${pick(r, ALNUM, 24)}`,
      `arn:aws:iam::${pick(r, DIGITS, 12)}:role/deploy`,
      `channel C${pick(r, UPPER + DIGITS, 10)} in workspace T${pick(r, UPPER + DIGITS, 8)}`,
      `git@github.com:acme/${pick(r, LOWER, 8)}.git`,
      `https://github.com/acme/${pick(r, LOWER, 8)}/pull/${Math.floor(r() * 9000)}`,
      `ada.${pick(r, LOWER, 5)}@example.com`,
    ][i % 6],
  'long-identifiers': (r, i) =>
    [
      `getAuthenticationTokenForUserSession(sessionId)`,
      `TestSecretRedactionWithEscapedJsonStrings`,
      `useProjectSessionsByDayQuery`,
      `MAX_UPLOAD_BODY_BYTES_DEFAULT`,
      `skipLibCheck: true, esModuleInterop: true`,
    ][i % 5],
  'prose-with-keywords': (r, i) =>
    [
      `The token expires after an hour; the password policy requires twelve characters.`,
      `Secret: the cache is warmed before the first request.`,
      `Key: value pairs are separated by a colon.`,
      `Rotate the API key and update the secret in the vault, then redeploy.`,
      `Password: see 1Password entry "prod db".`,
    ][i % 5],
  'versions-and-numbers': (r, i) =>
    [
      `version: 1.${Math.floor(r() * 40)}.${Math.floor(r() * 10)}`,
      `port: ${Math.floor(r() * 60000)}`,
      `timeout = ${Math.floor(r() * 90000)}`,
      `color: #${pick(r, HEX, 6)}`,
      `ip: 10.${Math.floor(r() * 255)}.${Math.floor(r() * 255)}.${Math.floor(r() * 255)}`,
    ][i % 5],
  'hashes-under-key-names': (r, i) =>
    [
      `checksum: ${pick(r, HEX, 64)}`,
      `"contentHash": "${pick(r, HEX, 40)}"`,
      `object_key: uploads/2024/${pick(r, LOWER, 8)}.png`,
      `idempotency_key: "${pick(r, HEX, 8)}-${pick(r, HEX, 4)}-4${pick(r, HEX, 3)}-a${pick(r, HEX, 3)}-${pick(r, HEX, 12)}"`,
    ][i % 4],
  'jwt-like-not-jwt': (r, i) => [`eyJ${pick(r, B64URL, 20)}`, `header.payload.signature`, `a.b.c`][i % 3],
  'urls-without-credentials': (r, i) =>
    [`https://example.com:8443/path?q=${pick(r, LOWER, 6)}`, `postgres://localhost:5432/app`, `redis://cache:6379/0`, `https://user@example.com/`][i % 4],
};

export function buildCorpus(): Corpus {
  const positives: Positive[] = [];
  let seed = 1;
  for (const [format, gen] of Object.entries(PREFIXED)) {
    const r = rng(seed++ * 7919);
    for (let i = 0; i < PER_FORMAT; i++) {
      const secret = gen(r);
      positives.push({ id: `${format}-${i}`, format, kind: 'prefixed', text: PREFIXED_CONTEXTS[i % PREFIXED_CONTEXTS.length](secret), secret });
    }
  }
  for (const [format, gen] of Object.entries(CONTEXTUAL)) {
    const r = rng(seed++ * 7919);
    for (let i = 0; i < PER_FORMAT; i++) {
      const [text, secret] = gen(r, i);
      positives.push({ id: `${format}-${i}`, format, kind: 'contextual', text, secret });
    }
  }
  const negatives: Negative[] = [];
  for (const [format, gen] of Object.entries(NEGATIVES)) {
    const r = rng(seed++ * 7919);
    for (let i = 0; i < 20; i++) negatives.push({ id: `${format}-${i}`, format, text: gen(r, i) });
  }
  return { positives, negatives };
}

export const CORPUS_PATH = path.join(__dirname, '..', 'test', 'redact', 'corpus.json');

if (require.main === module) {
  const corpus = buildCorpus();
  fs.mkdirSync(path.dirname(CORPUS_PATH), { recursive: true });
  fs.writeFileSync(CORPUS_PATH, `${JSON.stringify(corpus, null, 1)}\n`);
  const formats = new Set(corpus.positives.map((p) => p.format));
  process.stdout.write(`${corpus.positives.length} positives in ${formats.size} formats, ${corpus.negatives.length} negatives → ${CORPUS_PATH}\n`);
}
