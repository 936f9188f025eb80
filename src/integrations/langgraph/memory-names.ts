/**
 * Where FencedStore keeps a thread's long-term memory: records of the thread's scope named
 *
 *   mem/<namespace label>/…/<namespace label>/<key>
 *
 * every piece escaped (name-escape.ts), so `/` only separates pieces: the last piece is the key,
 * the others the namespace, and `mem/<labels>/` selects a namespace and everything below it.
 * Checkpoint records (`cp/`, `bl/`, `wr/`) and the run marker (`run`) never meet these names.
 */
import { InvalidNamespaceError, validateNamespace } from '@langchain/langgraph-checkpoint';
import { MAX_NAME_LENGTH } from '../../core/limits.js';
import { FencegateError } from '../../errors.js';
import { escapeName, unescapeName } from '../name-escape.js';

export const MEMORY_PREFIX = 'mem/';

export interface MemoryAddress {
  namespace: string[];
  key: string;
}

/** The record holding `key` of `namespace`; a name longer than a record name may be is refused. */
export function memoryName(namespace: string[], key: string): string {
  if (typeof key !== 'string' || key === '') {
    throw new FencegateError('invalid_request', 'a memory key must be a non-empty string', {
      field: 'key',
    });
  }
  const name = `${namespacePrefix(namespace)}${escapeName(key)}`;
  if (name.length > MAX_NAME_LENGTH) {
    throw new FencegateError(
      'invalid_request',
      `namespace ${JSON.stringify(namespace)} with key ${JSON.stringify(key)} makes a record name of ${name.length} characters, more than ${MAX_NAME_LENGTH}; use shorter labels or keys`,
      { field: 'key', length: name.length, limit: MAX_NAME_LENGTH },
    );
  }
  return name;
}

/** The prefix of every record of `namespace` and of the namespaces below it. */
export function namespacePrefix(namespace: string[]): string {
  return `${MEMORY_PREFIX}${namespace.map((label) => `${escapeName(label)}/`).join('')}`;
}

/**
 * The namespace and key a memory record name stands for; null when memoryName would never write
 * that name (a bad or needless escape, an empty key, a name too long): a record so named, committed
 * raw by the thread's holder, is no memory item, and must not read as one another key names.
 */
export function memoryAddress(name: string): MemoryAddress | null {
  if (!name.startsWith(MEMORY_PREFIX)) return null;
  const namespace = name.slice(MEMORY_PREFIX.length).split('/').map(unescapeName);
  const key = namespace.pop() ?? '';
  try {
    return memoryName(namespace, key) === name ? { namespace, key } : null;
  } catch (error) {
    if (error instanceof FencegateError) return null;
    throw error;
  }
}

/**
 * LangGraph's namespace rules (non-empty string labels without `.`, `:` or NUL; `langgraph` not
 * the root of a written namespace), answered as the catalog's `invalid_request`.
 */
export function checkNamespace(
  namespace: unknown,
  options: { allowEmpty?: boolean; allowReservedRoot?: boolean } = {},
): asserts namespace is string[] {
  if (!Array.isArray(namespace)) {
    throw new FencegateError('invalid_request', 'a namespace must be an array of strings', {
      field: 'namespace',
    });
  }
  try {
    validateNamespace(namespace as string[], options);
  } catch (error) {
    if (!(error instanceof InvalidNamespaceError)) throw error;
    throw new FencegateError('invalid_request', error.message, { field: 'namespace' });
  }
}
