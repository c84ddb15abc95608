// First: refuse an unsupported Node.js before anything else is loaded or touched.
import '../check-node.cjs';
import { ConfigError, loadConfig, type Config } from '../config';
import { connectionOptions, createDb, useUtcClock } from '../db/client';
import { migrateForCli } from './migrate';
import { createApiKey, listApiKeys, revokeApiKey } from '../services/keys';
import { createUser, findUserByEmail } from '../services/users';
import { createResetLink } from '../services/accounts';
import { checkPassword } from '../domain/passwords';
import { AppError } from '../errors';
import { rescanFromCli } from './redact';
import { reindexFromCli } from './reindex';
import { exportFromCli, importFromCli, progressSink } from './archive';
import { importRemoteFromCli } from './import-remote';
import { parseOnConflict } from '../services/import-session';
import { addMember, allTeams, createTeam, teamNameOf } from '../services/teams';
import { operatorCtx } from '../services/context';
import { retryDeadIndexWork } from '../services/search-outbox';
import { isTeamRole, TEAM_ROLES } from '../domain/teams';
import { openContentStore } from '../data/content-store';
import { migrateFromCli, sweepFromCli } from './content';
import { parseAfter, recomputeFromCli } from './usage';

/** Admin CLI. Errors: one line on stderr and a non-zero exit (2 for a usage mistake). */
class UsageError extends Error {}

/** A user asked for by email is missing: the message names the database looked in (a mistyped `DATABASE_URL` names a new, empty one). */
const noUser = (config: Config, email: string) => new UsageError(`no user with email ${email} in database ${connectionOptions(config.databaseUrl).database}`);

/** Every command with its options and what it prints: `--help` shows them, a line each; a mistake, the commands on one line. */
const COMMANDS: Array<[command: string, note?: string]> = [
  ['users create --email E [--name N] [--admin] [--password-stdin]', 'last line: a link to choose a password, unless --password-stdin'],
  ['users reset-password --email E', 'prints a one-time link, valid 1 hour'],
  ['keys create --email E [--name N] [--expires-in-days D] [--read-only | --scopes read|read,write]', 'token alone on the last line'],
  ['keys list --email E', 'one key per line, id first'],
  ['keys revoke KEY_ID'],
  ['search reindex'],
  ['search outbox-retry [ID]', 'index work that was given up on queued again: one row, or all'],
  ['redact rescan [--dry-run]'],
  ['export --email E [--team ID] [--project ID]... --out FILE'],
  ['import FILE --email E [--team ID] [--on-conflict skip|overwrite|newer]', 'exits 1 when entries were reported'],
  [
    'import-remote --from URL --token T --email E [--project ID]... [--concurrency N]',
    'N sessions at once (1-16, default 4); exits 1 when something could not be copied',
  ],
  ['teams create --name N --admin-email E', 'prints the team id'],
  ['teams add-member --team ID --email E --role admin|member|viewer'],
  ['teams list', 'one team per line, id first'],
  ['content migrate --to s3|db', 'moves stored content; resumable: run again'],
  ['content sweep [--grace-minutes M]', 'deletes objects no row names, unreferenced for the grace period'],
  ['usage recompute [--after PROJECT/SESSION] [--batch N]', 'reads every raw log again; a stopped run goes on with --after'],
];

const USAGE = `usage: cli ${COMMANDS.map(([c]) => c).join(' | ')}`;

/** `--help` (or `-h`, or `help`) anywhere: the commands, of the group named first when there is one. */
function helpOf(argv: string[]): string[] | null {
  if (!argv.some((a) => a === '--help' || a === '-h') && argv[0] !== 'help') return null;
  const group = argv[0] === 'help' ? argv[1] : argv[0];
  const ofGroup = COMMANDS.filter(([c]) => group !== undefined && c.split(' ')[0] === group);
  return ['usage:', ...(ofGroup.length ? ofGroup : COMMANDS).map(([c, note]) => `  npm run cli -- ${c}${note ? `    (${note})` : ''}`)];
}

/** Options that take no value. */
const SWITCHES = new Set(['admin', 'password-stdin', 'read-only']);

function parseArgs(argv: string[], allowed: string[]): { flags: Record<string, string>; positional: string[] } {
  const flags: Record<string, string> = {};
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('--')) {
      const [k, inline] = a.slice(2).split(/=(.*)/s, 2);
      if (!allowed.includes(k)) throw new UsageError(`unknown option --${k}`);
      if (SWITCHES.has(k)) {
        if (inline !== undefined) throw new UsageError(`option --${k} takes no value`);
        flags[k] = 'true';
        continue;
      }
      const v = inline ?? argv[++i];
      if (v === undefined) throw new UsageError(`option --${k} needs a value`);
      flags[k] = v;
    } else {
      positional.push(a);
    }
  }
  return { flags, positional };
}

/** Where the links the CLI prints point: `PUBLIC_URL`, else the address the service is configured to listen on. */
function linkBase(config: Config): string {
  return config.publicUrl ?? `http://${/^(0\.0\.0\.0|::)$/.test(config.host) ? 'localhost' : config.host}:${config.port}`;
}

function need(flags: Record<string, string>, name: string): string {
  const v = flags[name];
  if (!v) throw new UsageError(`missing --${name}`);
  return v;
}

/** Reads a password from standard input (first line; a trailing newline is not part of it). */
async function readStdin(input: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of input) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0];
}

interface CliIo {
  stdin?: NodeJS.ReadableStream;
}

/** Options of export, import and import-remote; `--project` may repeat. */
function parseArchiveArgs(argv: string[], allowed: string[]): { flags: Record<string, string>; projects: string[]; positional: string[] } {
  const flags: Record<string, string> = {};
  const projects: string[] = [];
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const [k, inline] = a.slice(2).split(/=(.*)/s, 2);
    if (!allowed.includes(k)) throw new UsageError(`unknown option --${k}`);
    const v = inline ?? argv[++i];
    if (v === undefined) throw new UsageError(`option --${k} needs a value`);
    if (k === 'project') projects.push(v);
    else flags[k] = v;
  }
  return { flags, projects, positional };
}

async function runArchive(command: 'export' | 'import' | 'import-remote', argv: string[], out: (line: string) => void): Promise<void> {
  const allowed = {
    export: ['email', 'team', 'project', 'out'],
    import: ['email', 'team', 'on-conflict'],
    'import-remote': ['from', 'token', 'email', 'project', 'concurrency'],
  }[command];
  const { flags, projects, positional } = parseArchiveArgs(argv, allowed);
  const email = need(flags, 'email');
  if (command === 'import' ? positional.length !== 1 : positional.length) throw new UsageError(USAGE);
  let onConflict: ReturnType<typeof parseOnConflict> = 'skip';
  if (command === 'import') {
    try {
      onConflict = parseOnConflict(flags['on-conflict']);
    } catch {
      throw new UsageError('--on-conflict must be one of: skip, overwrite, newer');
    }
  }
  const concurrency = flags.concurrency === undefined ? undefined : Number(flags.concurrency);
  if (concurrency !== undefined && !(/^\d{1,2}$/.test(flags.concurrency) && concurrency >= 1 && concurrency <= 16))
    throw new UsageError('--concurrency must be an integer from 1 to 16');
  const config = loadConfig();
  await migrateForCli(config.databaseUrl);
  const db = createDb(config.databaseUrl);
  const content = await openContentStore(config).catch(async (err: unknown) => {
    await db.close();
    throw err;
  });
  try {
    const user = await findUserByEmail(operatorCtx(db, config), email);
    if (!user) throw noUser(config, email);
    const progress = progressSink(Boolean(process.stderr.isTTY), out);
    if (command === 'export') {
      await exportFromCli(config, db, { userId: user.id, email, teamId: flags.team, projectIds: projects, outFile: need(flags, 'out') }, out, progress);
    } else if (command === 'import') {
      const summary = await importFromCli(config, db, { userId: user.id, email, teamId: flags.team, file: positional[0], onConflict }, out, progress);
      if (!summary.success)
        throw new Error(
          `import finished with ${summary.errorCount} error${summary.errorCount === 1 ? '' : 's'} (listed above): ${summary.failed} session${summary.failed === 1 ? '' : 's'} not imported`,
        );
    } else {
      const failed = await importRemoteFromCli(
        config,
        db,
        { userId: user.id, from: need(flags, 'from'), token: need(flags, 'token'), projectIds: projects, concurrency },
        out,
        progress,
      );
      if (failed) throw new Error(`import-remote finished: ${failed} item${failed === 1 ? '' : 's'} could not be copied (listed above)`);
    }
  } finally {
    await db.close();
    content.close();
  }
}

async function run(argv: string[], out: (line: string) => void, io: CliIo = {}): Promise<void> {
  const help = helpOf(argv);
  if (help) return help.forEach((line) => out(line));
  const [group, command, ...rest] = argv;
  if (group === 'export' || group === 'import' || group === 'import-remote') return runArchive(group, argv.slice(1), out);
  const known = [
    'users create',
    'users reset-password',
    'keys create',
    'keys list',
    'keys revoke',
    'search reindex',
    'search outbox-retry',
    'redact rescan',
    'teams create',
    'teams add-member',
    'teams list',
    'content migrate',
    'content sweep',
    'usage recompute',
  ];
  if (!group || !command || !known.includes(`${group} ${command}`)) {
    throw new UsageError(group ? `unknown command: ${[group, command].filter(Boolean).join(' ')}. ${USAGE}` : USAGE);
  }
  const spec: Record<string, string[]> = {
    'users create': ['email', 'name', 'admin', 'password-stdin'],
    'users reset-password': ['email'],
    'keys create': ['email', 'name', 'expires-in-days', 'read-only', 'scopes'],
    'keys list': ['email'],
    'keys revoke': [],
    'search reindex': [],
    'search outbox-retry': [],
    'redact rescan': [],
    'teams create': ['name', 'admin-email'],
    'teams add-member': ['team', 'email', 'role'],
    'teams list': [],
    'content migrate': ['to'],
    'content sweep': ['grace-minutes'],
    'usage recompute': ['after', 'batch'],
  };
  // Boolean flags take no value.
  const dryRun = rest.includes('--dry-run');
  if (dryRun && `${group} ${command}` !== 'redact rescan') throw new UsageError('unknown option --dry-run');
  const { flags, positional } = parseArgs(
    rest.filter((a) => a !== '--dry-run'),
    spec[`${group} ${command}`],
  );
  const config = loadConfig();
  await migrateForCli(config.databaseUrl);
  const db = createDb(config.databaseUrl);
  // The admin CLI acts as the operator: every rule of the services applies to it as such.
  const operator = operatorCtx(db, config);
  const content = await openContentStore(config).catch(async (err: unknown) => {
    await db.close();
    throw err;
  });
  try {
    const userByEmail = async (email: string) => {
      const u = await findUserByEmail(operator, email);
      if (!u) throw noUser(config, email);
      return u;
    };
    switch (`${group} ${command}`) {
      case 'users create': {
        const email = need(flags, 'email');
        let password: string | undefined;
        if (flags['password-stdin']) {
          try {
            password = checkPassword(await readStdin(io.stdin ?? process.stdin));
          } catch (e) {
            throw new UsageError(e instanceof AppError ? e.message : 'could not read the password from standard input');
          }
        }
        const u = await createUser(operator, email, flags.name, { password, role: flags.admin ? 'admin' : 'member' });
        out(`created ${u.role === 'admin' ? 'admin' : 'user'} ${u.id} ${u.email}`);
        if (!password) {
          // Without a password the account cannot sign in yet: the last line is where to choose one.
          const { link, expiresAt } = await createResetLink(operator, u.id, linkBase(config));
          out(`choose a password through this link, valid until ${expiresAt} (one use):`);
          out(link);
        }
        return;
      }
      case 'users reset-password': {
        const u = await userByEmail(need(flags, 'email'));
        const { link, expiresAt } = await createResetLink(operator, u.id, linkBase(config));
        out(`reset link for ${u.email}, valid until ${expiresAt} (one use):`);
        out(link);
        return;
      }
      case 'keys create': {
        const u = await userByEmail(need(flags, 'email'));
        let days: number | undefined;
        if (flags['expires-in-days'] !== undefined) {
          days = Number(flags['expires-in-days']);
          if (!Number.isInteger(days) || days < 1 || days > 3650) throw new UsageError('--expires-in-days must be an integer from 1 to 3650');
        }
        let scopeList: string[] | undefined;
        if (flags.scopes !== undefined) {
          if (flags['read-only']) throw new UsageError('give --read-only or --scopes, not both');
          scopeList = flags.scopes.split(',').map((s) => s.trim());
          if (!['read', 'read,write', 'write,read'].includes(scopeList.join(','))) throw new UsageError('--scopes must be read or read,write');
        } else if (flags['read-only']) scopeList = ['read'];
        // Same rules as POST /keys (name 1–100 characters).
        const { key, token } = await createApiKey(operator, { name: flags.name ?? 'cli', expiresInDays: days, scopes: scopeList }, u.id);
        const readOnly = key.scopes.includes('write') ? '' : ' (read-only)';
        out(`created key ${key.id} for ${u.email}${readOnly}${key.expiresAt ? ` (expires ${key.expiresAt})` : ''}`);
        out(token);
        return;
      }
      case 'keys list': {
        const u = await userByEmail(need(flags, 'email'));
        for (const k of await listApiKeys(operator, u.id)) {
          const state = k.revokedAt ? `revoked ${k.revokedAt}` : k.expiresAt && Date.parse(k.expiresAt) <= Date.now() ? `expired ${k.expiresAt}` : 'active';
          out(`${k.id}\t${k.name}\t${state}\tcreated ${k.createdAt}\tlast used ${k.lastUsedAt ?? 'never'}\tscopes ${k.scopes.join(',')}`);
        }
        return;
      }
      case 'teams create': {
        const name = need(flags, 'name');
        if ([...name].length < 1 || [...name].length > 100) throw new UsageError('--name must be 1 to 100 characters');
        const u = await userByEmail(need(flags, 'admin-email'));
        const { id } = await createTeam(operator, { name }, u.id);
        out(`created team ${id} ${name} (admin ${u.email})`);
        out(id);
        return;
      }
      case 'teams add-member': {
        const teamId = need(flags, 'team');
        const role = need(flags, 'role');
        if (!isTeamRole(role)) throw new UsageError(`--role must be one of: ${TEAM_ROLES.join(', ')}`);
        if ((await teamNameOf(operator, teamId)) === null) throw new UsageError(`no team with id ${teamId}`);
        const u = await userByEmail(need(flags, 'email'));
        const m = await addMember(operator, teamId, { email: u.email, role }).catch((e) => {
          throw e instanceof AppError && e.code === 'CONFLICT' ? new UsageError(`${u.email} is already a member of team ${teamId}`) : e;
        });
        out(`added ${m.user.email} to team ${teamId} as ${m.role}`);
        return;
      }
      case 'teams list': {
        for (const t of await allTeams(operator)) out(`${t.id}\t${t.name}\tmembers ${t.memberCount}\tprojects ${t.projectCount}\tcreated ${t.createdAt}`);
        return;
      }
      case 'keys revoke': {
        if (positional.length !== 1) throw new UsageError('usage: keys revoke KEY_ID');
        const k = await revokeApiKey(operator, positional[0]).catch((e) => {
          throw e instanceof AppError && e.code === 'NOT_FOUND' ? new UsageError(`no key with id ${positional[0]}`) : e;
        });
        out(`revoked key ${k.id} at ${k.revokedAt}`);
        return;
      }
      case 'search outbox-retry': {
        // Dead-lettered index work back into the outbox: one row, or all.
        if (positional.length > 1 || (positional[0] !== undefined && !/^\d+$/.test(positional[0]))) {
          throw new UsageError('usage: search outbox-retry [ID]');
        }
        const n = await retryDeadIndexWork(operator, positional[0] === undefined ? undefined : Number(positional[0]));
        out(`requeued ${n} search outbox row${n === 1 ? '' : 's'}`);
        return;
      }
      case 'search reindex': {
        await reindexFromCli(config, db, out);
        return;
      }
      case 'redact rescan': {
        if (positional.length) throw new UsageError('usage: redact rescan [--dry-run]');
        await rescanFromCli(config, db, dryRun, out);
        return;
      }
      case 'content migrate': {
        const to = need(flags, 'to');
        if (positional.length || (to !== 's3' && to !== 'db')) throw new UsageError('usage: content migrate --to s3|db');
        if (!content.objects) throw new UsageError('content migrate needs S3_BUCKET (and the other S3_* settings) for the bucket to move content to or from');
        await migrateFromCli({ config, db, store: content, to, out });
        return;
      }
      case 'content sweep': {
        const grace = flags['grace-minutes'];
        if (positional.length || (grace !== undefined && !/^\d{1,6}$/.test(grace))) throw new UsageError('usage: content sweep [--grace-minutes M]');
        await sweepFromCli(db, content, grace === undefined ? undefined : Number(grace), out);
        return;
      }
      case 'usage recompute': {
        const { after, batch } = flags;
        if (positional.length) throw new UsageError('usage: usage recompute [--after PROJECT/SESSION] [--batch N]');
        if (after !== undefined && !parseAfter(after)) throw new UsageError('--after must be PROJECT/SESSION (as a previous run printed it)');
        if (batch !== undefined && !(/^\d{1,4}$/.test(batch) && Number(batch) >= 1 && Number(batch) <= 1000)) {
          throw new UsageError('--batch must be an integer from 1 to 1000');
        }
        await recomputeFromCli({ config, db, after, batch: batch === undefined ? undefined : Number(batch), out });
        return;
      }
    }
  } finally {
    await db.close();
    content.close();
  }
}

if (require.main === module) {
  useUtcClock();
  run(process.argv.slice(2), (line) => process.stdout.write(`${line}\n`)).then(
    () => process.exit(0),
    (err) => {
      const msg =
        err instanceof UsageError || err instanceof ConfigError || err instanceof AppError
          ? err.message
          : `error: ${err instanceof Error ? err.message : String(err)}`;
      process.stderr.write(`${msg.split('\n').join('; ')}\n`);
      process.exit(err instanceof UsageError ? 2 : 1);
    },
  );
}
