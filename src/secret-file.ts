import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * A generated secret kept in a file (mode 0600): read when present, else created once. Several
 * processes may race to create it; the first write wins and the others read what it wrote.
 */
export function readOrCreateSecret(file: string, bytes: number): string {
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    if (existing) return existing;
  } catch {
    /* created below */
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const secret = crypto.randomBytes(bytes).toString('base64url');
  try {
    fs.writeFileSync(file, secret, { flag: 'wx', mode: 0o600 });
    return secret;
  } catch {
    return fs.readFileSync(file, 'utf8').trim(); // another process won the race
  }
}
