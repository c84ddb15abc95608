/**
 * The database that src/db/migrate.ts builds from prisma/migrations is exactly what
 * prisma/schema.prisma describes (no drift), and the bookkeeping matches `prisma migrate deploy`.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as mariadb from 'mariadb';
import { getDMMF } from '@prisma/internals';
import { migrate, MIGRATIONS_DIR } from '../../src/db/migrate';
import { connectionOptions } from '../../src/db/client';
import { testConnection } from '../support/connection';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { ROOT } from '../support/paths';

type Dmmf = Awaited<ReturnType<typeof getDMMF>>;
type Model = Dmmf['datamodel']['models'][number];
type Field = Model['fields'][number];

let db: TestDatabase;
let conn: mariadb.Connection;
let dmmf: Dmmf;

beforeAll(async () => {
  dmmf = await getDMMF({ datamodel: fs.readFileSync(path.join(ROOT, 'prisma', 'schema.prisma'), 'utf8') });
  db = await createTestDatabase('sa_schema');
  conn = await testConnection(connectionOptions(db.url));
});
afterAll(async () => {
  await conn?.end();
  await db?.drop();
});

const tableOf = (m: Model) => m.dbName ?? m.name;
const columnOf = (m: Model, fieldName: string) => {
  const f = m.fields.find((x) => x.name === fieldName)!;
  return (f as Field & { dbName?: string | null }).dbName ?? f.name;
};
const scalarFields = (m: Model) => m.fields.filter((f) => f.kind === 'scalar' || f.kind === 'enum');

/** The column type MariaDB reports for a Prisma field (Prisma's MySQL defaults when no @db.*). */
function expectedColumnType(f: Field): string {
  const native = f.nativeType as [string, string[]] | null | undefined;
  if (native) {
    const [name, args] = native;
    switch (name) {
      case 'VarChar':
        return `varchar(${args[0]})`;
      case 'Char':
        return `char(${args[0]})`;
      case 'Text':
        return 'text';
      case 'MediumText':
        return 'mediumtext';
      case 'LongBlob':
        return 'longblob';
      case 'DateTime':
        return `datetime(${args[0] ?? 0})`;
      case 'Int':
        return 'int';
      case 'BigInt':
        return 'bigint';
      default:
        throw new Error(`test does not know native type ${name}`);
    }
  }
  switch (f.type) {
    case 'String':
      return 'varchar(191)';
    case 'Int':
      return 'int';
    case 'BigInt':
      return 'bigint';
    case 'Boolean':
      return 'tinyint(1)';
    case 'DateTime':
      return 'datetime(3)';
    case 'Bytes':
      return 'longblob';
    case 'Float':
      return 'double';
    default:
      throw new Error(`test does not know type ${f.type}`);
  }
}

/** information_schema's COLUMN_TYPE, with integer display widths dropped (int(11) → int). */
const normalizeType = (t: string) =>
  t
    .toLowerCase()
    .replace(/^(int|bigint)\(\d+\)/, '$1')
    .replace(/ unsigned$/, '');

async function q<T = any>(sql: string, params: unknown[] = []): Promise<T[]> {
  return conn.query(sql, params);
}

test('tables: exactly the models (@@map) plus _prisma_migrations', async () => {
  const rows = await q<{ t: string }>("SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE'");
  const expected = dmmf.datamodel.models.map(tableOf).concat('_prisma_migrations').sort();
  expect(rows.map((r) => r.t).sort()).toEqual(expected);
});

test('columns: names, nullability, types, auto-increment', async () => {
  for (const m of dmmf.datamodel.models) {
    const rows = await q<{ name: string; nullable: string; type: string; extra: string }>(
      `SELECT COLUMN_NAME AS name, IS_NULLABLE AS nullable, COLUMN_TYPE AS type, EXTRA AS extra
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`,
      [tableOf(m)],
    );
    const actual = Object.fromEntries(
      rows.map((r) => [r.name, { nullable: r.nullable === 'YES', type: normalizeType(r.type), autoIncrement: /auto_increment/i.test(r.extra) }]),
    );
    const expected = Object.fromEntries(
      scalarFields(m).map((f) => [
        columnOf(m, f.name),
        {
          nullable: !f.isRequired,
          type: expectedColumnType(f),
          autoIncrement: typeof f.default === 'object' && f.default !== null && (f.default as { name?: string }).name === 'autoincrement',
        },
      ]),
    );
    expect({ table: tableOf(m), columns: actual }).toEqual({ table: tableOf(m), columns: expected });
  }
});

async function indexesOf(table: string) {
  const rows = await q<{ name: string; nonUnique: number | bigint; col: string; seq: number | bigint }>(
    `SELECT INDEX_NAME AS name, NON_UNIQUE AS nonUnique, COLUMN_NAME AS col, SEQ_IN_INDEX AS seq
       FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY INDEX_NAME, SEQ_IN_INDEX`,
    [table],
  );
  const byName = new Map<string, { unique: boolean; columns: string[] }>();
  for (const r of rows) {
    const e = byName.get(r.name) ?? { unique: Number(r.nonUnique) === 0, columns: [] };
    e.columns.push(r.col);
    byName.set(r.name, e);
  }
  return byName;
}

test('primary keys, unique and normal indexes: names and column order', async () => {
  for (const m of dmmf.datamodel.models) {
    const table = tableOf(m);
    const actual = await indexesOf(table);

    // Primary key.
    const pkFields = m.primaryKey?.fields ?? m.fields.filter((f) => f.isId).map((f) => f.name);
    expect({ table, pk: actual.get('PRIMARY')?.columns }).toEqual({ table, pk: pkFields.map((f) => columnOf(m, f)) });

    // Unique and normal indexes, from the DMMF's index list (names as the migration must create them).
    const expected: Record<string, { unique: boolean; columns: string[] }> = {};
    for (const idx of dmmf.datamodel.indexes.filter((i) => i.model === m.name && i.type !== 'id')) {
      const name = idx.dbName ?? `${table}_${idx.fields.map((f) => f.name).join('_')}_${idx.type === 'unique' ? 'key' : 'idx'}`;
      expected[name] = { unique: idx.type === 'unique', columns: idx.fields.map((f) => columnOf(m, f.name)) };
    }
    const actualOthers = Object.fromEntries([...actual].filter(([n]) => n !== 'PRIMARY'));
    expect({ table, indexes: actualOthers }).toEqual({ table, indexes: expected });
  }
});

test('foreign keys: columns, referenced table and columns, ON DELETE', async () => {
  const rows = await q<{ name: string; table: string; col: string; refTable: string; refCol: string; pos: number; onDelete: string }>(
    `SELECT k.CONSTRAINT_NAME AS name, k.TABLE_NAME AS \`table\`, k.COLUMN_NAME AS col, k.REFERENCED_TABLE_NAME AS refTable,
            k.REFERENCED_COLUMN_NAME AS refCol, k.ORDINAL_POSITION AS pos, r.DELETE_RULE AS onDelete
       FROM information_schema.KEY_COLUMN_USAGE k
       JOIN information_schema.REFERENTIAL_CONSTRAINTS r
         ON r.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME AND r.TABLE_NAME = k.TABLE_NAME
      WHERE k.TABLE_SCHEMA = DATABASE() AND k.REFERENCED_TABLE_NAME IS NOT NULL
      ORDER BY k.TABLE_NAME, k.CONSTRAINT_NAME, k.ORDINAL_POSITION`,
  );
  const actual: Record<string, unknown> = {};
  for (const r of rows) {
    const key = `${r.table}.${r.name}`;
    const e = (actual[key] ??= { table: r.table, columns: [], refTable: r.refTable, refColumns: [], onDelete: r.onDelete }) as any;
    e.columns.push(r.col);
    e.refColumns.push(r.refCol);
  }

  const expected: Record<string, unknown> = {};
  const byName = new Map(dmmf.datamodel.models.map((m) => [m.name, m]));
  for (const m of dmmf.datamodel.models) {
    for (const f of m.fields) {
      const from = (f as { relationFromFields?: string[] }).relationFromFields;
      if (f.kind !== 'object' || !from || from.length === 0) continue;
      const target = byName.get(f.type)!;
      const to = (f as { relationToFields?: string[] }).relationToFields!;
      const onDelete = (f as { relationOnDelete?: string }).relationOnDelete ?? (f.isRequired ? 'Restrict' : 'SetNull');
      const name = `${tableOf(m)}_${from.map((x) => columnOf(m, x)).join('_')}_fkey`;
      expected[`${tableOf(m)}.${name}`] = {
        table: tableOf(m),
        columns: from.map((x) => columnOf(m, x)),
        refTable: tableOf(target),
        refColumns: to.map((x) => columnOf(target, x)),
        onDelete: onDelete.replace(/([a-z])([A-Z])/g, '$1 $2').toUpperCase(),
      };
    }
  }
  expect(Object.keys(expected).length).toBeGreaterThan(0);
  expect(actual).toEqual(expected);
});

test('_prisma_migrations: one finished row per migration with the sha256 of migration.sql', async () => {
  const dirs = fs
    .readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  expect(dirs.length).toBeGreaterThan(0);
  const rows = await q<{ migration_name: string; checksum: string; finished_at: Date | null; applied_steps_count: number; rolled_back_at: Date | null }>(
    'SELECT migration_name, checksum, finished_at, applied_steps_count, rolled_back_at FROM _prisma_migrations ORDER BY migration_name',
  );
  expect(rows.map((r) => r.migration_name)).toEqual(dirs);
  for (const r of rows) {
    const sql = fs.readFileSync(path.join(MIGRATIONS_DIR, r.migration_name, 'migration.sql'));
    expect(r.checksum).toBe(crypto.createHash('sha256').update(sql).digest('hex'));
    expect(r.finished_at).toBeInstanceOf(Date);
    expect(r.rolled_back_at).toBeNull();
    expect(Number(r.applied_steps_count)).toBe(1);
  }
});

test('re-running migrate applies nothing and changes nothing', async () => {
  const before = await q('SELECT id, checksum, finished_at, applied_steps_count FROM _prisma_migrations ORDER BY id');
  const result = await migrate(db.url);
  expect(result.applied).toEqual([]);
  expect(result.alreadyApplied.length).toBe(before.length);
  expect(await q('SELECT id, checksum, finished_at, applied_steps_count FROM _prisma_migrations ORDER BY id')).toEqual(before);
});
