/**
 * The cursor of the cutover list (newest first): the position of the last cutover of a page, as
 * (startedAt, cutoverId), since start times alone can repeat. Opaque to callers; every store
 * adapter pages with it the same way.
 */
import { fail } from '../errors.js';

export interface CutoverPosition {
  startedAt: number;
  cutoverId: string;
}

export function encodeCutoverCursor(position: CutoverPosition): string {
  return Buffer.from(JSON.stringify([position.startedAt, position.cutoverId]), 'utf8').toString(
    'base64url',
  );
}

/** null for the first page; invalid_request for a cursor this API did not hand out. */
export function decodeCutoverCursor(cursor: string | undefined): CutoverPosition | null {
  if (cursor === undefined) return null;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  if (
    !Array.isArray(decoded) ||
    decoded.length !== 2 ||
    !Number.isSafeInteger(decoded[0]) ||
    typeof decoded[1] !== 'string'
  ) {
    fail('invalid_request', 'cursor must be a nextCursor from a previous page of cutovers', {
      field: 'cursor',
    });
  }
  return { startedAt: decoded[0] as number, cutoverId: decoded[1] };
}
