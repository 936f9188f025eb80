/**
 * What a store kind registered from outside fencegate must look like, checked field by field when
 * it is registered: a mistake is named then, rather than met as a TypeError on the first open.
 */
import { fail } from '../errors.js';
import type { StoreKind } from './registry.js';

/** Refuses a malformed kind with invalid_request naming the field to fix. */
export function requireWellFormed(kind: StoreKind): void {
  const problem = shapeProblem(kind);
  if (problem !== undefined) {
    return fail('invalid_request', `store kind cannot be registered: ${problem}`);
  }
}

function shapeProblem(kind: StoreKind): string | undefined {
  if (typeof kind !== 'object' || kind === null) return 'pass an object of the StoreKind shape';
  if (typeof kind.name !== 'string' || !/^[a-z][a-z\d_-]*$/i.test(kind.name)) {
    return 'name must be a word of letters, digits, - and _ (as Store.kind reports it)';
  }
  const forms: unknown = kind.urlForms;
  if (
    !Array.isArray(forms) ||
    forms.length === 0 ||
    !forms.every((form) => typeof form === 'string' && /^[a-z][a-z\d+.-]*:/i.test(form))
  ) {
    return `urlForms of "${kind.name}" must list at least one URL form, each starting with its scheme (memory:NAME)`;
  }
  if (typeof kind.description !== 'string') return `description of "${kind.name}" must be a string`;
  const packages: unknown = kind.packages;
  if (!Array.isArray(packages) || !packages.every((name) => typeof name === 'string')) {
    return `packages of "${kind.name}" must list package names (none: [])`;
  }
  if (typeof kind.matches !== 'function' || typeof kind.load !== 'function') {
    return `"${kind.name}" needs the functions matches(url) and load()`;
  }
  return undefined;
}

/** The lowercase schemes of a kind's URL forms: "sqlite" for "sqlite:PATH". */
export function schemesOf(kind: StoreKind): string[] {
  const schemes = kind.urlForms.map((form) => /^([a-z][a-z\d+.-]*):/i.exec(form)?.[1]);
  return [...new Set(schemes.map((scheme) => (scheme ?? '').toLowerCase()))];
}
