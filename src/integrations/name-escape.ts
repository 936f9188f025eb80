/**
 * Turns a foreign identifier (a LangGraph thread id or namespace, a BullMQ job id) into a piece of
 * a fencegate name, reversibly. Characters of `[A-Za-z0-9._:-]` stay as they are, so ids made of
 * them (uuids, numbers) keep their order; every other byte of the UTF-8 form becomes `@` and two
 * hex digits. `/` is escaped too, which leaves it free to separate the pieces of a name.
 */
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
