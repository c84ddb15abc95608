/**
 * Refuses to run on a Node.js older than package.json's `engines.node` (`>=MAJOR[.MINOR[.PATCH]]`):
 * one line naming both versions on stderr and exit code 1, before anything else is loaded, so that
 * a feature missing from an old runtime never shows up later as a damaged archive or a half-done
 * import. Plain JavaScript that any Node.js runs: `npm start` runs it before its build step
 * (`prestart`), and the service's and the admin CLI's entry points require it first.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

/** package.json of the service: the nearest one above this file (src/ or dist/src/). */
function manifest() {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8'));
    if (path.dirname(dir) === dir) return {};
  }
}

const parts = (v) =>
  String(v)
    .split('.')
    .map((n) => Number.parseInt(n, 10) || 0);

function olderThan(running, least) {
  const a = parts(running);
  const b = parts(least);
  for (let i = 0; i < 3; i++) if ((a[i] || 0) !== (b[i] || 0)) return (a[i] || 0) < (b[i] || 0);
  return false;
}

const range = String((manifest().engines || {}).node || '').trim();
const least = /^>=\s*v?(\d+(?:\.\d+){0,2})$/.exec(range);
if (least && olderThan(process.versions.node, least[1])) {
  process.stderr.write(
    `Session Archive needs Node.js ${range} (package.json engines); this is Node.js ${process.versions.node}. Install a supported Node.js.\n`,
  );
  process.exit(1);
}
