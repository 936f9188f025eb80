/**
 * The `filter` of a memory search: every field must match. A plain value matches an equal value
 * (objects and arrays compared as canonical JSON); an object of operators (`$eq`, `$ne`, `$gt`,
 * `$gte`, `$lt`, `$lte`, `$in`, `$nin`) matches when each of its operators holds. An unknown
 * operator is refused rather than read as "no match".
 */
import { canonicalJson } from '../../core/canonical.js';
import { FencegateError } from '../../errors.js';

const OPERATORS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin']);

export function checkFilter(filter: unknown): asserts filter is Record<string, unknown> {
  if (filter === undefined) return;
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) {
    throw new FencegateError('invalid_request', 'a search filter must be an object of fields', {
      field: 'filter',
    });
  }
  for (const [field, condition] of Object.entries(filter)) {
    if (!isOperatorObject(condition)) continue;
    for (const operator of Object.keys(condition)) {
      if (!OPERATORS.has(operator)) {
        throw new FencegateError(
          'invalid_request',
          `filter operator ${operator} on ${field} is not supported; use one of ${[...OPERATORS].join(', ')}`,
          { field: `filter.${field}` },
        );
      }
    }
  }
}

export function matchesFilter(
  value: Record<string, unknown>,
  filter: Record<string, unknown> | undefined,
): boolean {
  if (filter === undefined) return true;
  return Object.entries(filter).every(([field, condition]) =>
    isOperatorObject(condition)
      ? Object.entries(condition).every(([operator, operand]) =>
          holds(operator, value[field], operand),
        )
      : same(value[field], condition),
  );
}

function isOperatorObject(condition: unknown): condition is Record<string, unknown> {
  return (
    condition !== null &&
    typeof condition === 'object' &&
    !Array.isArray(condition) &&
    Object.keys(condition).some((key) => key.startsWith('$'))
  );
}

function holds(operator: string, actual: unknown, operand: unknown): boolean {
  switch (operator) {
    case '$eq':
      return same(actual, operand);
    case '$ne':
      return !same(actual, operand);
    case '$gt':
      return Number(actual) > Number(operand);
    case '$gte':
      return Number(actual) >= Number(operand);
    case '$lt':
      return Number(actual) < Number(operand);
    case '$lte':
      return Number(actual) <= Number(operand);
    case '$in':
      return Array.isArray(operand) && operand.some((item) => same(actual, item));
    default: // $nin
      return !Array.isArray(operand) || !operand.some((item) => same(actual, item));
  }
}

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return canonicalJson(a) === canonicalJson(b);
}
