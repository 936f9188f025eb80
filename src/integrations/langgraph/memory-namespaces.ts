/**
 * listNamespaces over the namespaces a thread's memory holds: the match conditions (a prefix or a
 * suffix, `*` matching any one label), then `maxDepth` (namespaces cut to that many labels, each
 * cut namespace once), then sorted, then `offset` and `limit`.
 */
import type { ListNamespacesOperation, MatchCondition } from '@langchain/langgraph-checkpoint';

export function selectNamespaces(
  namespaces: Iterable<string[]>,
  operation: ListNamespacesOperation,
): string[][] {
  const conditions = operation.matchConditions ?? [];
  const kept = new Map<string, string[]>();
  for (const namespace of namespaces) {
    if (!conditions.every((condition) => meets(namespace, condition))) continue;
    const cut =
      operation.maxDepth === undefined ? namespace : namespace.slice(0, operation.maxDepth);
    kept.set(JSON.stringify(cut), cut);
  }
  const sorted = [...kept.values()].sort(compareNamespaces);
  return sorted.slice(operation.offset, operation.offset + operation.limit);
}

function meets(namespace: string[], condition: MatchCondition): boolean {
  const { path } = condition;
  if (path.length > namespace.length) return false;
  const start = condition.matchType === 'prefix' ? 0 : namespace.length - path.length;
  return path.every((label, index) => label === '*' || label === namespace[start + index]);
}

function compareNamespaces(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    const order = (a[i] as string) < (b[i] as string) ? -1 : a[i] === b[i] ? 0 : 1;
    if (order !== 0) return order;
  }
  return a.length - b.length;
}
