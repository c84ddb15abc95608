import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/** True when the operation selects the field path below the current field (through fragments). */
export function selects(info: GraphQLResolveInfo, path: string[]): boolean {
  const walk = (set: SelectionSetNode | undefined, rest: string[]): boolean => {
    if (!set) return false;
    if (rest.length === 0) return true;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        if (sel.name.value === rest[0] && (rest.length === 1 || walk(sel.selectionSet, rest.slice(1)))) return true;
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        if (walk(sel.selectionSet, rest)) return true;
      } else {
        const frag = info.fragments[sel.name.value];
        if (frag && walk(frag.selectionSet, rest)) return true;
      }
    }
    return false;
  };
  return info.fieldNodes.some((node) => walk(node.selectionSet, path));
}
