/**
 * The Sql contract (src/data/sql.ts): `query` reads, `execute` changes rows. With a read replica
 * (src/db/client.ts, userView) only `execute` marks a user's write, so a statement that changed
 * rows through `query` would let that user's next read miss it on a lagging replica. Every
 * `.query(...)` call in src/ is checked here: its statement starts with SELECT, or it passes on a
 * statement its caller gave it (a wrapper), or it is transaction control on a raw connection.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from '../support/paths';

const SRC = path.resolve(ROOT, 'src');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'generated' ? [] : sources(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

const READ = /^[\s(]*SELECT\b/i;
/** Transaction control, sent on a connection of the driver, not through an Sql. */
const CONTROL = /^\s*(SET TRANSACTION|SET SESSION|START TRANSACTION|ROLLBACK)\b/i;

test('every statement run through query() is a read', () => {
  const wrong: string[] = [];
  for (const file of sources(SRC)) {
    const sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    /** Top-level `const NAME = '…'` / `…`: statement fragments a query may start with. */
    const consts = new Map<string, string>();
    for (const st of sf.statements) {
      if (!ts.isVariableStatement(st)) continue;
      for (const d of st.declarationList.declarations) {
        if (ts.isIdentifier(d.name) && d.initializer && (ts.isStringLiteralLike(d.initializer) || ts.isTemplateExpression(d.initializer))) {
          consts.set(d.name.text, ts.isTemplateExpression(d.initializer) ? d.initializer.head.text : d.initializer.text);
        } else if (ts.isIdentifier(d.name) && d.initializer && /\bprepared\(/.test(d.initializer.getText())) {
          // Texts marked by `prepared` (src/data/sql.ts), which refuses any that is not a read.
          consts.set(d.name.text, 'SELECT');
        }
      }
    }
    const paramsAround = (n: ts.Node): Set<string> => {
      const names = new Set<string>();
      for (let p: ts.Node | undefined = n; p; p = p.parent) {
        if (ts.isFunctionLike(p)) for (const param of p.parameters) if (ts.isIdentifier(param.name)) names.add(param.name.text);
      }
      return names;
    };
    /** The statement's first words, as far as they can be told from the source; null: a wrapper's parameter. */
    const startOf = (a: ts.Expression): string | null => {
      if (ts.isStringLiteralLike(a)) return a.text;
      if (ts.isTemplateExpression(a)) {
        if (a.head.text.trim()) return a.head.text;
        const first = a.templateSpans[0].expression;
        return ts.isIdentifier(first) ? (consts.get(first.text) ?? first.text) : first.getText();
      }
      if (ts.isIdentifier(a)) return paramsAround(a).has(a.text) ? null : (consts.get(a.text) ?? a.text);
      // prepared(text): the text's own start.
      if (ts.isCallExpression(a) && ts.isIdentifier(a.expression) && a.expression.text === 'prepared' && a.arguments.length === 1)
        return startOf(a.arguments[0]);
      // One of a table of prepared texts: STATEMENTS[key].
      if (ts.isElementAccessExpression(a) && ts.isIdentifier(a.expression)) return consts.get(a.expression.text) ?? a.getText();
      // [part, part].join(' UNION ALL '): every part must read.
      if (
        ts.isCallExpression(a) &&
        ts.isPropertyAccessExpression(a.expression) &&
        a.expression.name.text === 'join' &&
        ts.isArrayLiteralExpression(a.expression.expression)
      ) {
        const parts = a.expression.expression.elements.map((e) =>
          ts.isCallExpression(e) && ts.isIdentifier(e.expression) ? bodyOf(e.expression.text) : e.getText(),
        );
        return parts.every((p) => READ.test(p)) ? 'SELECT' : a.getText();
      }
      return a.getText();
    };
    /** The text an arrow function `const name = (…) => \`…\`` in this file returns. */
    const bodyOf = (name: string): string => {
      let found = name;
      const visit = (n: ts.Node) => {
        if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.name.text === name && n.initializer && ts.isArrowFunction(n.initializer)) {
          const b = n.initializer.body;
          if (ts.isTemplateExpression(b)) found = b.head.text;
          else if (ts.isStringLiteralLike(b)) found = b.text;
        }
        ts.forEachChild(n, visit);
      };
      visit(sf);
      return found;
    };
    const visit = (n: ts.Node) => {
      if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && n.expression.name.text === 'query' && n.arguments.length > 0) {
        const start = startOf(n.arguments[0]);
        if (start !== null && !READ.test(start) && !CONTROL.test(start)) {
          wrong.push(`${path.relative(SRC, file)}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1} ${start.trim().slice(0, 60)}`);
        }
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  expect(wrong).toEqual([]);
});
