/**
 * Every name a module of src/ exports is imported somewhere: by src/, the tests, the benchmarks,
 * the scripts or the console, or named as a GraphQL mapper in codegen.ts. A name used only
 * inside its own file is not exported; one used nowhere is deleted.
 */
import path from 'node:path';
import { ROOT } from '../support/paths';
import { exportedNames, moduleRefs, rel, resolveImport, sourceFiles, SRC, stringLiterals } from '../support/sources';

const CONSUMERS = [
  ...sourceFiles(SRC, ['src/generated']),
  ...['test', 'bench', 'scripts'].flatMap((d) => sourceFiles(path.join(ROOT, d))),
  ...sourceFiles(path.join(ROOT, 'web'), ['web/src/gql', 'web/src/openapi']),
  path.join(ROOT, 'prisma.config.ts'),
];

/** codegen.ts names mapper types as `'<path from src/generated/>#Name'`: the generated resolver types import them. */
function mapperRefs(): [string, string][] {
  const codegen = path.join(ROOT, 'codegen.ts');
  return stringLiterals(codegen).flatMap(({ text }) => {
    const m = /^(\.{1,2}\/[^#]+)#(\w+)/.exec(text);
    const target = m && resolveImport(path.join(SRC, 'generated', 'graphql.ts'), m[1]);
    return m && target ? [[target, m[2]] as [string, string]] : [];
  });
}

test('no src module exports a name nothing imports', () => {
  const used = new Map<string, Set<string>>();
  const use = (target: string, name: string) => {
    let names = used.get(target);
    if (!names) used.set(target, (names = new Set()));
    names.add(name);
  };
  for (const file of CONSUMERS) {
    for (const ref of moduleRefs(file)) if (ref.target) ref.names.forEach((n) => use(ref.target!, n));
  }
  for (const [target, name] of mapperRefs()) use(target, name);
  const unused = sourceFiles(SRC, ['src/generated']).flatMap((file) => {
    const names = used.get(file) ?? new Set<string>();
    if (names.has('*')) return [];
    return exportedNames(file)
      .filter((n) => !names.has(n))
      .map((n) => `${rel(file)}: ${n}`);
  });
  expect(unused).toEqual([]);
});
