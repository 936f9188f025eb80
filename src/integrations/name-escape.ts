/**
 * Turns a foreign identifier (a LangGraph thread id or namespace, a BullMQ job id) into a piece of
 * a fencegate name, reversibly. Characters of `[A-Za-z0-9._:-]` stay as they are, so ids made of
 * them (uuids, numbers) keep their order; every other byte of the UTF-8 form becomes `@` and two
 * hex digits. `/` is escaped too, which leaves it free to separate the pieces of a name.
 *
 * A name made of pieces may come out longer than a fencegate name may be; `fitName` shortens it
 * so that two long names never come out the same, and a shortened name never equals one that was
 * not shortened.
 */
import { sha256Hex } from '../core/canonical.js';
import { MAX_NAME_LENGTH } from '../core/limits.js';

/** Hex digits of the sha256 of a name that end its shortened form. */
const DIGEST_CHARS = 32;
/**
 * Sits between a shortened name's start and its digest. escapeName never writes it: its `@` is
 * always followed by two hex digits.
 */
const SHORTENED_MARK = '@-';
const SHORTENED_END = new RegExp(`${SHORTENED_MARK}[0-9a-f]{${DIGEST_CHARS}}$`);
const KEPT = /[A-Za-z0-9._:-]/;

export function escapeName(id: string): string {
  let out = '';
  for (const char of id) {
    if (KEPT.test(char)) {
      out += char;
      continue;
    }
    for (const byte of Buffer.from(char, 'utf8')) {
      out += `@${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    }
  }
  return out;
}

export function unescapeName(piece: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < piece.length; i += 1) {
    if (piece[i] === '@') {
      bytes.push(Number.parseInt(piece.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(piece.charCodeAt(i));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * `name` itself when it has at most `limit` characters; else its start, `@-` and a digest of all
 * of it, `limit` characters in all. A plain cut would make two long names that start alike one
 * name: two jobs would share a holder, an operationId or an entry of the jobs ledger.
 *
 * A name that already ends as a shortened one (`@-` and the digest's hex digits: only a piece not
 * made by escapeName can hold it) is shortened too, however short: a name that fits could
 * otherwise equal the shortened form of a longer one. The Python client's `fit_name` is the same
 * rule (test/fixtures/fit-name-vectors.json holds both languages' vectors).
 */
export function fitName(name: string, limit = MAX_NAME_LENGTH): string {
  if (name.length <= limit && !SHORTENED_END.test(name)) return name;
  const start = name.slice(0, limit - SHORTENED_MARK.length - DIGEST_CHARS);
  return `${start}${SHORTENED_MARK}${sha256Hex(name).slice(0, DIGEST_CHARS)}`;
}
