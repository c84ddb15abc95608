/**
 * Secret-detection rules, as data. Shapes follow gitleaks' published rule set (config/gitleaks.toml)
 * and secretlint's recommended preset; sources are noted per group.
 *
 * Every pattern is written so a scan stays linear in the input:
 * - it starts with a literal prefix (or a fixed keyword) and is guarded by a look-behind that
 *   refuses a start inside a longer run of token characters, so attempts never overlap;
 * - every repetition is bounded, and no two repetitions can match the same characters.
 * The scanner (engine.ts) runs all prefixed rules as one combined pattern, then the few
 * structural rules (private keys, URLs, headers, name/value pairs) with their own keyword scans.
 *
 * To add a rule: append `{ id, pattern }` below (id: lower-case, short — it is shown in masks and
 * findings), add positives and hard negatives to scripts/gen-redact-corpus.ts, run
 * `npx tsx scripts/gen-redact-corpus.ts`, `npx jest test/redact` and `npx tsx bench/redact.ts`.
 */

interface PrefixedRule {
  id: string;
  /** Source of a regular expression for the whole secret (no capture groups, no flags). */
  pattern: string;
  /**
   * Literal strings one of which every match contains, found by a fast literal scan before the
   * pattern is tried; by default the pattern's leading literal. `lead`: how many characters of
   * the secret come before the anchor (default 0; [min, max]).
   */
  anchors?: string[];
  lead?: [number, number];
}

export const PREFIXED_RULES: PrefixedRule[] = [
  // Cloud (gitleaks: aws-access-token, gcp-api-key, alibaba-access-key-id, digitalocean-*, ...)
  { id: 'aws-access-key', pattern: '(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}', anchors: ['AKIA', 'ASIA', 'ABIA', 'ACCA', 'A3T'] },
  { id: 'gcp-api-key', pattern: 'AIza[0-9A-Za-z_-]{35}' },
  { id: 'alibaba-access-key', pattern: 'LTAI[A-Za-z0-9]{20}' },
  { id: 'digitalocean-token', pattern: 'do[opr]_v1_[a-f0-9]{64}', anchors: ['doo_v1_', 'dop_v1_', 'dor_v1_'] },
  { id: 'azure-ad-secret', pattern: '[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}', anchors: ['Q~'], lead: [4, 4] },
  { id: 'databricks-token', pattern: 'dapi[a-f0-9]{32}(?:-[0-9])?' },
  { id: 'vault-token', pattern: 'hv[sb]\\.[A-Za-z0-9_-]{90,120}', anchors: ['hvs.', 'hvb.'] },
  { id: 'terraform-token', pattern: '[A-Za-z0-9]{14}\\.atlasv1\\.[A-Za-z0-9_=-]{60,70}', anchors: ['.atlasv1.'], lead: [14, 14] },
  { id: 'doppler-token', pattern: 'dp\\.(?:pt|st|sa|ct|scim|audit)\\.[A-Za-z0-9]{40,44}', anchors: ['dp.'] },
  { id: 'pulumi-token', pattern: 'pul-[a-f0-9]{40}' },
  { id: 'flyio-token', pattern: 'fo1_[A-Za-z0-9_-]{43}' },
  { id: 'supabase-token', pattern: 'sbp_[a-f0-9]{40}' },
  { id: 'newrelic-key', pattern: 'NRAK-[A-Z0-9]{27}' },
  { id: 'grafana-token', pattern: '(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,2})', anchors: ['glsa_', 'glc_'] },
  { id: 'sentry-token', pattern: '(?:sntrys_eyJ[A-Za-z0-9+/=_-]{50,300}|sntryu_[a-f0-9]{64})', anchors: ['sntrys_', 'sntryu_'] },
  // AI providers (gitleaks: openai-api-key, anthropic-api-key, huggingface-access-token, ...)
  { id: 'anthropic-key', pattern: 'sk-ant-(?:api|admin|oat)0[0-9]-[A-Za-z0-9_-]{80,120}' },
  { id: 'openai-key', pattern: 'sk-(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{20,200}T3BlbkFJ[A-Za-z0-9_-]{20,200}' },
  { id: 'openai-key', pattern: 'sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,200}' },
  { id: 'openai-key', pattern: 'sk-[A-Za-z0-9]{48}' },
  { id: 'huggingface-token', pattern: 'hf_[A-Za-z0-9]{34}' },
  { id: 'groq-key', pattern: 'gsk_[A-Za-z0-9]{52}' },
  { id: 'xai-key', pattern: 'xai-[A-Za-z0-9]{80}' },
  { id: 'replicate-token', pattern: 'r8_[A-Za-z0-9]{37}' },
  { id: 'perplexity-key', pattern: 'pplx-[A-Za-z0-9]{48}' },
  // Version control (gitleaks: github-pat, github-fine-grained-pat, gitlab-*)
  { id: 'github-token', pattern: 'gh[pousr]_[A-Za-z0-9]{36}', anchors: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'] },
  { id: 'github-token', pattern: 'github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}' },
  {
    id: 'gitlab-token',
    pattern: 'gl(?:pat|dt|rt|ptt|ft|imt|agent|oas|cbt|soat)-[A-Za-z0-9_-]{20,64}',
    anchors: ['glpat-', 'gldt-', 'glrt-', 'glptt-', 'glft-', 'glimt-', 'glagent-', 'gloas-', 'glcbt-', 'glsoat-'],
  },
  { id: 'gitlab-token', pattern: 'GR1348941[A-Za-z0-9_-]{20}' },
  { id: 'atlassian-token', pattern: 'ATATT3[A-Za-z0-9_=-]{186}' },
  // Payment (gitleaks: stripe-access-token, square-*, ...)
  {
    id: 'stripe-key',
    pattern: '(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{24,247}',
    anchors: ['sk_live_', 'sk_test_', 'sk_prod_', 'rk_live_', 'rk_test_', 'rk_prod_'],
  },
  { id: 'stripe-key', pattern: 'whsec_[A-Za-z0-9]{32,64}' },
  { id: 'square-token', pattern: 'sq0(?:atp|csp|idp)-[A-Za-z0-9_-]{22,43}', anchors: ['sq0'] },
  { id: 'square-token', pattern: 'EAAA[A-Za-z0-9_-]{60}' },
  { id: 'braintree-token', pattern: 'access_token\\$(?:production|sandbox)\\$[a-z0-9]{16}\\$[a-f0-9]{32}' },
  // Chat and mail (gitleaks: slack-*, discord-*, telegram-bot-api-token, sendgrid-api-token, ...)
  { id: 'slack-token', pattern: 'xox[abpres]-[A-Za-z0-9-]{10,250}', anchors: ['xox'] },
  { id: 'slack-token', pattern: 'xapp-[0-9]-[A-Z0-9]{9,12}-[0-9]{10,14}-[a-f0-9]{40,64}' },
  { id: 'slack-webhook', pattern: 'hooks\\.slack\\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{40,140}' },
  { id: 'discord-webhook', pattern: 'discord(?:app)?\\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_-]{60,70}', anchors: ['discord'] },
  { id: 'telegram-token', pattern: '[0-9]{8,10}:AA[A-Za-z0-9_-]{33}', anchors: [':AA'], lead: [8, 10] },
  { id: 'twilio-key', pattern: 'SK[0-9a-f]{32}' },
  { id: 'sendgrid-key', pattern: 'SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}' },
  { id: 'mailgun-key', pattern: 'key-[0-9a-f]{32}' },
  { id: 'mailchimp-key', pattern: '[0-9a-f]{32}-us[0-9]{1,2}', anchors: ['-us'], lead: [32, 32] },
  { id: 'postman-key', pattern: 'PMAK-[a-f0-9]{24}-[a-f0-9]{34}' },
  { id: 'linear-key', pattern: 'lin_api_[A-Za-z0-9]{40}' },
  { id: 'notion-token', pattern: '(?:secret_[A-Za-z0-9]{43}|ntn_[0-9]{11}[A-Za-z0-9]{35})', anchors: ['secret_', 'ntn_'] },
  { id: 'shopify-token', pattern: 'shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}', anchors: ['shpat_', 'shpca_', 'shppa_', 'shpss_'] },
  { id: 'mapbox-token', pattern: 'sk\\.eyJ[A-Za-z0-9_-]{50,300}\\.[A-Za-z0-9_-]{20,40}' },
  // Package registries (gitleaks: npm-access-token, pypi-upload-token, rubygems-api-token, ...)
  { id: 'npm-token', pattern: 'npm_[A-Za-z0-9]{36}' },
  { id: 'pypi-token', pattern: 'pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,400}' },
  { id: 'rubygems-token', pattern: 'rubygems_[a-f0-9]{48}' },
  { id: 'nuget-key', pattern: 'oy2[a-z0-9]{43}' },
  { id: 'dockerhub-token', pattern: 'dckr_pat_[A-Za-z0-9_-]{27}' },
  { id: 'crates-token', pattern: 'cio[A-Za-z0-9]{32}' },
  // Misc (gitleaks: age-secret-key, 1password-service-account-token)
  { id: 'age-secret-key', pattern: 'AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}' },
  { id: 'onepassword-token', pattern: 'ops_eyJ[A-Za-z0-9+/_-]{100,1200}={0,3}' },
  // JSON Web Tokens (secretlint/gitleaks: jwt): header.payload.signature, both JSON parts base64url.
  { id: 'jwt', pattern: 'eyJ[A-Za-z0-9_-]{8,2000}\\.eyJ[A-Za-z0-9_-]{8,4000}\\.[A-Za-z0-9_-]{16,1000}' },
];

/**
 * Names whose value is a secret (`NAME=value`, `"name": "value"`, `name: value`). A name counts
 * when it ends with one of these words (after `_`, `-`, `.`, a camel-case hump, or at its start).
 * Strong names take any non-reference value; `key` alone needs a random-looking value.
 */
export const STRONG_NAME_WORDS = [
  'secret',
  'token',
  'password',
  'passwd',
  'passphrase',
  'pwd',
  'pass',
  'apikey',
  'api_key',
  'api-key',
  'accesskey',
  'access_key',
  'privatekey',
  'private_key',
  'secretkey',
  'secret_key',
  'signingkey',
  'signing_key',
  'encryptionkey',
  'encryption_key',
  'masterkey',
  'master_key',
  'authkey',
  'auth_key',
  'clientsecret',
  'client_secret',
  'accountkey',
  'sharedaccesskey',
  'credential',
  'credentials',
];
export const WEAK_NAME_WORDS = ['key'];
