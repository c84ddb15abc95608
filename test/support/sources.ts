/**
 * The repository's TypeScript sources as the architecture tests read them: files, their relative
 * imports (resolved to files), what they export and their string literals, parsed with the
 * `typescript` compiler (syntax only, no type checking).
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from './paths';

export const SRC = path.join(ROOT, 'src');

/** Every .ts/.tsx file under `dir` (declaration files left out), skipping folders named in `skip`. */
export function sourceFiles(dir: string, skip: readonly string[] = []): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || skip.includes(path.relative(ROOT, p)) ? [] : sourceFiles(p, skip);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** A repository-relative path with forward slashes, for messages. */
export const rel = (file: string) => path.relative(ROOT, file).split(path.sep).join('/');

const parsed = new Map<string, ts.SourceFile>();

export function parse(file: string): ts.SourceFile {
  let sf = parsed.get(file);
  if (!sf) {
    const kind = file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
    sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, kind);
    parsed.set(file, sf);
  }
  return sf;
}

/** The file a relative specifier names (`./x`, `./x.js`, `./x/index`), or null for a package or an unknown path. */
export function resolveImport(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = path.resolve(path.dirname(from), specifier).replace(/\.(m|c)?js$/, '');
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts'), path.join(base, 'index.tsx')]) {
    if (/\.tsx?$/.test(candidate) && fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** One module reference of a file: the names it takes (`'*'`: all of them, as a namespace, `export *` or a dynamic import). */
export interface ModuleRef {
  specifier: string;
  target: string | null;
  names: string[];
  /** `export … from`: the file passes the names on. */
  reexport: boolean;
  /** Only types (`import type`, `export type … from`): erased when compiled. */
  typeOnly: boolean;
}

export function moduleRefs(file: string): ModuleRef[] {
  const sf = parse(file);
  const refs: ModuleRef[] = [];
  const add = (specifier: string, names: string[], reexport: boolean, typeOnly: boolean) =>
    refs.push({ specifier, target: resolveImport(file, specifier), names, reexport, typeOnly });
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const names: string[] = [];
      let typeOnly = !!clause?.isTypeOnly;
      if (clause?.name) names.push('default');
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) names.push(...namespaceUses(sf, bindings.name.text));
      if (bindings && ts.isNamedImports(bindings)) {
        for (const el of bindings.elements) names.push((el.propertyName ?? el.name).text);
        if (bindings.elements.length > 0 && bindings.elements.every((el) => el.isTypeOnly)) typeOnly = true;
      }
      add(node.moduleSpecifier.text, names, false, typeOnly);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.exportClause;
      const names = clause && ts.isNamedExports(clause) ? clause.elements.map((el) => (el.propertyName ?? el.name).text) : ['*'];
      add(node.moduleSpecifier.text, names, true, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.arguments.length === 1 && ts.isStringLiteral(node.arguments[0])) {
      const dynamic = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const required = ts.isIdentifier(node.expression) && node.expression.text === 'require';
      if (dynamic || required) add(node.arguments[0].text, ['*'], false, false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text, node.qualifier ? [ts.isIdentifier(node.qualifier) ? node.qualifier.text : '*'] : ['*'], false, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return refs;
}

/** The members a namespace import `ns` is used with (`ns.name`); all of them when `ns` is passed on whole. */
function namespaceUses(sf: ts.SourceFile, ns: string): string[] {
  const used = new Set<string>();
  let whole = false;
  const visit = (node: ts.Node) => {
    if (ts.isIdentifier(node) && node.text === ns && !(ts.isNamespaceImport(node.parent) && node.parent.name === node)) {
      const p = node.parent;
      if ((ts.isPropertyAccessExpression(p) && p.expression === node) || (ts.isQualifiedName(p) && p.left === node)) {
        used.add(ts.isPropertyAccessExpression(p) ? p.name.text : p.right.text);
      } else whole = true;
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return whole ? ['*'] : [...used];
}

const hasExport = (node: ts.Node) => ts.canHaveModifiers(node) && !!ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
const hasDefault = (node: ts.Node) => ts.canHaveModifiers(node) && !!ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);

/** The names a file exports itself (declarations and `export { … }` of its own bindings; not `export … from`). */
export function exportedNames(file: string): string[] {
  const names: string[] = [];
  for (const st of parse(file).statements) {
    if (ts.isExportAssignment(st)) names.push('default');
    else if (ts.isExportDeclaration(st) && !st.moduleSpecifier && st.exportClause && ts.isNamedExports(st.exportClause)) {
      names.push(...st.exportClause.elements.map((el) => el.name.text));
    } else if (hasExport(st)) {
      if (hasDefault(st)) names.push('default');
      else if (ts.isVariableStatement(st)) {
        for (const d of st.declarationList.declarations) names.push(...bindingNames(d.name));
      } else if (
        (ts.isFunctionDeclaration(st) ||
          ts.isClassDeclaration(st) ||
          ts.isInterfaceDeclaration(st) ||
          ts.isTypeAliasDeclaration(st) ||
          ts.isEnumDeclaration(st) ||
          ts.isModuleDeclaration(st)) &&
        st.name &&
        ts.isIdentifier(st.name)
      ) {
        names.push(st.name.text);
      }
    }
  }
  return names;
}

function bindingNames(name: ts.BindingName): string[] {
  if (ts.isIdentifier(name)) return [name.text];
  return name.elements.flatMap((el) => (ts.isOmittedExpression(el) ? [] : bindingNames(el.name)));
}

/** The text of every string literal and template of a file (a template's substitutions as `${}`), with its line. */
export function stringLiterals(file: string): { line: number; text: string }[] {
  const sf = parse(file);
  const out: { line: number; text: string }[] = [];
  const visit = (node: ts.Node) => {
    let text: string | null = null;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) text = node.text;
    else if (ts.isTemplateExpression(node)) text = node.head.text + node.templateSpans.map((s) => '${}' + s.literal.text).join('');
    if (text !== null) out.push({ line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1, text });
    if (!ts.isTemplateExpression(node)) ts.forEachChild(node, visit);
    else node.templateSpans.forEach((s) => visit(s.expression));
  };
  visit(sf);
  return out;
}
