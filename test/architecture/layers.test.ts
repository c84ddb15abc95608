/**
 * Imports run down the layers (docs/development.md, "Layout"): the doors and
 * the composition root on top, then middleware, services, the search side and the worker-thread
 * pool, the data layer, and pure rules at the bottom. A module may import its own folder and any
 * folder below it, never one above it (that is how cycles such as services ↔ search start).
 */
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/paths';
import ts from 'typescript';
import { exportedNames, moduleRefs, parse, rel, sourceFiles, stringLiterals } from '../support/sources';

/** Higher imports lower. Top-level files count as folders of their own name. */
const RANK: Record<string, number> = {
  main: 10,
  app: 9,
  deps: 9,
  cli: 9,
  rest: 8,
  graphql: 8,
  mcp: 8,
  metrics: 8,
  http: 7,
  api: 6.5,
  auth: 6,
  services: 5,
  // The shapes clients read (zod): services present their objects as these, so they sit below them.
  'api/schemas': 4.9,
  search: 4,
  live: 4,
  offload: 3,
  db: 2.5,
  data: 2,
  config: 1.5,
  'config-variables': 1.45,
  'config-checks': 1.4,
  domain: 1,
  redact: 0.5,
  logger: 0.5,
  'secret-file': 0.5,
  errors: 0,
  generated: 0,
};

const SRC = path.resolve(ROOT, 'src');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'generated' ? [] : sources(p);
    return /\.tsx?$/.test(e.name) ? [p] : [];
  });
}

/** The first folder (or top-level file) of src/; src/api/schemas/ is a unit of its own. */
function unitOf(file: string): string {
  const parts = path.relative(SRC, file).split(path.sep);
  if (parts[0] === 'api' && parts[1] === 'schemas') return 'api/schemas';
  return parts[0].replace(/\.tsx?$/, '');
}

test('every folder of src/ has a layer', () => {
  const units = new Set(sources(SRC).map(unitOf));
  expect([...units].filter((u) => !(u in RANK))).toEqual([]);
});

test('no import runs upward', () => {
  const upward: string[] = [];
  for (const file of sources(SRC)) {
    const from = unitOf(file);
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from|import|require\()\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const target = path.resolve(path.dirname(file), m[1]);
      if (!target.startsWith(SRC + path.sep)) continue;
      const to = unitOf(target);
      if (to !== from && RANK[to] >= RANK[from]) upward.push(`${path.relative(SRC, file)} → ${m[1]}`);
    }
  }
  expect(upward).toEqual([]);
});

/** The doors: they translate HTTP, GraphQL, MCP and command lines to service calls and back. */
const DOORS = new Set(['rest', 'graphql', 'http', 'cli', 'mcp', 'metrics', 'app', 'main']);

/** The modules of src/data a door may import, and why (storage concerns that carry no service rule). */
const DOOR_DATA: Record<string, string> = {
  'data/errors.ts': 'the doors and main map a caught storage failure (database unreachable) to 503 / a clean exit',
  'data/content-store/index.ts': 'the admin CLI opens the content store from the configuration, as the composition root (deps.ts) does',
  'data/content-store/migrate.ts': "the admin CLI's `content migrate`: maintenance of the storage itself",
  'data/content-store/sweep.ts': "the admin CLI's `content sweep`: maintenance of the storage itself",
};

test('no door imports src/data but the storage concerns it names (rules and storage are reached through services)', () => {
  const reached: string[] = [];
  for (const file of sources(SRC)) {
    if (!DOORS.has(unitOf(file))) continue;
    for (const ref of moduleRefs(file)) {
      if (!ref.target || unitOf(ref.target) !== 'data') continue;
      if (!(path.relative(SRC, ref.target).split(path.sep).join('/') in DOOR_DATA)) reached.push(`${path.relative(SRC, file)} → ${ref.specifier}`);
    }
  }
  expect(reached).toEqual([]);
});

/**
 * A file of nothing but `export … from` is a proxy: it hides where a name lives, or lets a layer
 * reach one it may not import. Callers import the module that defines the name. (No folder of
 * src/ or web/src/ is a package with a public surface of its own, so no index file is exempt.)
 */
test('no source file only re-exports', () => {
  const files = [...sourceFiles(SRC, ['src/generated']), ...sourceFiles(path.join(ROOT, 'web', 'src'), ['web/src/gql', 'web/src/openapi'])];
  const proxies = files.filter((file) => {
    const statements = parse(file).statements;
    return statements.length > 0 && statements.every((st) => ts.isExportDeclaration(st) && st.moduleSpecifier !== undefined);
  });
  expect(proxies.map(rel)).toEqual([]);
});

/**
 * A file offers its own names, not another of our modules' names: a name passed on (`export …
 * from`, `export { imported }`, `export const x = imported`, `export type X = Imported`) is a proxy
 * inside a file, and one of src/data passed on by a service lets a door reach the data layer
 * through it. Callers import such a name from the module that defines it; a folder's index.ts is
 * the one place that gathers its module's names.
 */
function passedOn(file: string): string[] {
  const sf = parse(file);
  const imported = new Map<string, string>();
  for (const st of sf.statements) {
    // Names of packages may be given the project's own name (`export type Logger = pino.Logger`).
    if (!ts.isImportDeclaration(st) || !ts.isStringLiteral(st.moduleSpecifier) || !st.moduleSpecifier.text.startsWith('.')) continue;
    const bindings = st.importClause?.namedBindings;
    if (st.importClause?.name) imported.set(st.importClause.name.text, st.moduleSpecifier.text);
    if (bindings && ts.isNamespaceImport(bindings)) imported.set(bindings.name.text, st.moduleSpecifier.text);
    if (bindings && ts.isNamedImports(bindings)) for (const el of bindings.elements) imported.set(el.name.text, st.moduleSpecifier.text);
  }
  const exported = (node: ts.Node) => ts.canHaveModifiers(node) && !!ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  const out: string[] = [];
  const say = (name: string, from: string) => out.push(`${rel(file)}: ${name} from ${from}`);
  for (const st of sf.statements) {
    if (ts.isExportDeclaration(st)) {
      const names = st.exportClause && ts.isNamedExports(st.exportClause) ? st.exportClause.elements.map((el) => (el.propertyName ?? el.name).text) : ['*'];
      if (st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier)) {
        if (st.moduleSpecifier.text.startsWith('.')) for (const n of names) say(n, st.moduleSpecifier.text);
      } else for (const n of names) if (imported.has(n)) say(n, imported.get(n)!);
    } else if (ts.isVariableStatement(st) && exported(st)) {
      for (const d of st.declarationList.declarations) {
        if (d.initializer && ts.isIdentifier(d.initializer) && imported.has(d.initializer.text)) say(d.initializer.text, imported.get(d.initializer.text)!);
      }
    } else if (ts.isTypeAliasDeclaration(st) && exported(st) && ts.isTypeReferenceNode(st.type) && !st.type.typeArguments) {
      const root = st.type.typeName.getText(sf).split('.')[0];
      if (imported.has(root)) say(st.type.typeName.getText(sf), imported.get(root)!);
    }
  }
  return out;
}

test("no source file passes on a name it imports, but a folder's index.ts (the face of its module)", () => {
  const files = sourceFiles(SRC, ['src/generated']).filter((f) => path.basename(f) !== 'index.ts');
  expect(files.flatMap(passedOn)).toEqual([]);
});

/** Inside src/search/: the engine side knows nothing of the embedded engine or of the sync worker. */
test('search/engine imports neither search/embedded nor search/sync', () => {
  const engine = path.join(SRC, 'search', 'engine');
  const upward: string[] = [];
  for (const file of sources(engine)) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from|import|require\()\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const target = path.resolve(path.dirname(file), m[1]);
      if (target.startsWith(path.join(SRC, 'search') + path.sep) && !target.startsWith(engine + path.sep)) upward.push(`${path.relative(SRC, file)} → ${m[1]}`);
    }
  }
  expect(upward).toEqual([]);
});

/**
 * Every SQL statement lives in src/data (src/db runs the migrations; src/generated is Prisma's):
 * a statement anywhere else is a string literal or template that reads like one.
 */
const SQL_STATEMENT = /\b(?:SELECT\b[\s\S]*\bFROM|INSERT\s+(?:IGNORE\s+)?INTO|UPDATE\s+\S+\s+SET|DELETE\s+FROM|REPLACE\s+INTO)\b/i;

test('no SQL statement outside src/data and src/db', () => {
  const outside = sourceFiles(SRC, ['src/data', 'src/db', 'src/generated']).flatMap((file) =>
    stringLiterals(file)
      .filter((s) => SQL_STATEMENT.test(s.text))
      .map((s) => `${rel(file)}:${s.line} ${s.text.slice(0, 80)}`),
  );
  expect(outside).toEqual([]);
});

/** Import cycles left for now, each with its reason (a cycle is named by its files in order, starting with the least). */
const CYCLES_ALLOWED: Record<string, string> = {};

/** The cycles among src/'s files: each strongly connected group of files that import one another, as one path through it. */
function importCycles(files: string[]): string[] {
  const edges = new Map(files.map((f) => [f, [...new Set(moduleRefs(f).flatMap((r) => (r.target && r.target !== f ? [r.target] : [])))]]));
  // Tarjan's strongly connected components.
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) groups.push(group);
    }
  };
  for (const f of files) if (!idx.has(f)) connect(f);
  return groups.map((g) => g.map(rel).sort().join(' ⇄ '));
}

test('no import cycle in src/ (and every allowed one still exists: a broken cycle leaves the list)', () => {
  const cycles = importCycles(sourceFiles(SRC, ['src/generated']));
  expect(cycles.filter((c) => !(c in CYCLES_ALLOWED))).toEqual([]);
  expect(Object.keys(CYCLES_ALLOWED).filter((c) => !cycles.includes(c))).toEqual([]);
});

/** A handler file of src/rest/ is named like the file of src/api/routes/ whose operations it implements. */
test('each src/rest handler file is named like its route file', () => {
  const routeFiles = sourceFiles(path.join(SRC, 'api', 'routes')).filter((f) => path.basename(f) !== 'index.ts');
  const fileOfTable = new Map(routeFiles.flatMap((f) => exportedNames(f).map((n) => [n, f] as const)));
  const misnamed: string[] = [];
  for (const file of sourceFiles(path.join(SRC, 'rest'))) {
    for (const ref of moduleRefs(file)) {
      if (!ref.target?.startsWith(path.join(SRC, 'api', 'routes'))) continue;
      for (const name of ref.names.filter((n) => n.endsWith('Routes'))) {
        const table = fileOfTable.get(name);
        if (table && path.basename(table) !== path.basename(file)) misnamed.push(`${rel(file)} implements ${rel(table)}`);
      }
    }
  }
  expect(misnamed).toEqual([]);
});
