/** Which queries semantic search embeds: questions in words; quoted phrases and identifier-like words stay lexical. */
import { isLexicalQuery } from '../../src/search/semantic/embedder';

test.each([
  '"connection pool"',
  'why "pool exhausted"',
  'retryWithBackoff',
  'RetryPolicy timeout',
  'max_client_conn',
  'ER_LOCK_DEADLOCK',
  'max-retry-count',
  'req.session.user',
  'src/http/body.ts',
  'TS2345',
  'E11000 duplicate key',
  'ECONNRESET on upload',
  'parseInt()',
])('%s stays lexical', (q) => expect(isLexicalQuery(q)).toBe(true));

test.each([
  'why is the pool exhausted',
  'Cannot read properties of undefined',
  'flaky tests in CI',
  'How did we fix the login?',
  "don't retry uploads",
  'API keys',
])('%s is embedded', (q) => expect(isLexicalQuery(q)).toBe(false));
