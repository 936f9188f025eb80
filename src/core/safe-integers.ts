/**
 * Integers beyond ±(2^53−1) have no exact JavaScript number: parsed, they are rounded, and two
 * different requests can then carry the same value (and the same fingerprint, so one is taken as
 * the replay of the other). fencegate never rounds: such a number is refused with
 * `invalid_request` naming its JSON path, in the library (a number or a bigint in a value) and
 * over HTTP (any number literal of the body, found in the raw text before it is parsed).
 */
import { fail, FencegateError } from '../errors.js';

/** A number that is an integer no JavaScript number holds exactly (any |n| ≥ 2^53). */
export function isUnsafeInteger(value: number): boolean {
  return Number.isInteger(value) && !Number.isSafeInteger(value);
}

/** `parent.key` or `parent[3]`, as the rest of the project names fields (keys as they are). */
export function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

export function unsafeIntegerError(path: string, shown: string): FencegateError {
  return new FencegateError(
    'invalid_request',
    `${path} holds the integer ${shown}, beyond ±(2^53−1) = ±9007199254740991, which would be rounded; send it as a string, or as a number no larger`,
    { field: path },
  );
}

export function failBigint(path: string): never {
  return fail(
    'invalid_request',
    `${path} holds a bigint, which JSON has no exact form for; send it as a string, or as a number within ±(2^53−1)`,
    { field: path },
  );
}

interface Container {
  array: boolean;
  /** The current index, or the start and end of the current key's string token (quotes included). */
  index: number;
  keyStart: number;
  keyEnd: number;
}

const NUMBER_CHAR = /[0-9eE.+-]/;

/**
 * Scans JSON text for a number literal whose value is an unsafe integer, and returns its path
 * (named as `childPath` names it, the root as `root`) and its literal, or null. Text that is not
 * valid JSON is left to the JSON parser: the scan never throws and may return null for it.
 */
export function findUnsafeInteger(
  text: string,
  root = 'body',
): { path: string; literal: string } | null {
  // No unsafe integer is written with fewer than 16 digits unless it has an exponent.
  if (!/[0-9]{16}|[0-9][eE]/.test(text)) return null;
  const stack: Container[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      const top = stack.at(-1);
      if (expectKey && top !== undefined) {
        top.keyStart = start;
        top.keyEnd = i + 1;
        expectKey = false;
      }
    } else if (c === '{' || c === '[') {
      stack.push({ array: c === '[', index: 0, keyStart: -1, keyEnd: -1 });
      expectKey = c === '{';
    } else if (c === '}' || c === ']') {
      stack.pop();
      expectKey = false;
    } else if (c === ',') {
      const top = stack.at(-1);
      if (top?.array === true) top.index++;
      else expectKey = true;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      const start = i;
      while (i + 1 < text.length && NUMBER_CHAR.test(text[i + 1]!)) i++;
      const literal = text.slice(start, i + 1);
      if (isUnsafeInteger(Number(literal))) return { path: pathOf(text, stack, root), literal };
    }
  }
  return null;
}

function pathOf(text: string, stack: readonly Container[], root: string): string {
  let path = '';
  for (const container of stack) {
    if (container.array) {
      path = childPath(path === '' ? root : path, container.index);
      continue;
    }
    let key = '';
    try {
      key = JSON.parse(text.slice(container.keyStart, container.keyEnd)) as string;
    } catch {
      // An invalid key: the parser will refuse the body anyway.
    }
    path = childPath(path, key);
  }
  return path === '' ? root : path;
}
