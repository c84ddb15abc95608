import {
  getDirectiveValues,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  type FieldNode,
  type FragmentSpreadNode,
  type GraphQLResolveInfo,
  type InlineFragmentNode,
  type SelectionSetNode,
} from 'graphql';

/**
 * True when the operation selects the field path below the current field (through fragments),
 * honouring `@skip(if:)` and `@include(if:)` with the operation's variables: a field the client
 * left out that way is not selected, so nothing is computed for it.
 */
export function selects(info: GraphQLResolveInfo, path: string[]): boolean {
  const included = (node: FieldNode | InlineFragmentNode | FragmentSpreadNode): boolean => {
    if (getDirectiveValues(GraphQLSkipDirective, node, info.variableValues)?.if === true) return false;
    return getDirectiveValues(GraphQLIncludeDirective, node, info.variableValues)?.if !== false;
  };
  const walk = (set: SelectionSetNode | undefined, rest: string[]): boolean => {
    if (!set) return false;
    if (rest.length === 0) return true;
    for (const sel of set.selections) {
      if (!included(sel)) continue;
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
