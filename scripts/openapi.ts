/**
 * The service's OpenAPI document without a server: `tsx scripts/openapi.ts [FILE]` writes it to
 * FILE (else to stdout), exactly as `GET /api/v1/openapi.json` serves it. `npm run generate` writes
 * it to web/src/openapi/openapi.json, from which openapi-typescript makes the console's REST types
 * (web/src/openapi/schema.ts); both are generated, not committed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { openApiDocument } from '../src/api/openapi';

const out = process.argv[2];
const text = `${JSON.stringify(openApiDocument(), null, 2)}\n`;
if (out) {
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, text);
} else process.stdout.write(text);
