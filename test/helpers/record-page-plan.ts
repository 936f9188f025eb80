/**
 * Reading what a record page's SQLite statement is compiled to do: the values each index search
 * starts from. A search whose key holds the cursor starts at the page; one whose key holds only
 * the prefix reads every record before the cursor and filters it away.
 */

/** One instruction of SQLite's `EXPLAIN` output. */
export interface Instruction {
  addr: number;
  opcode: string;
  p1: number;
  p2: number;
  p3: number;
  p4: unknown;
}

/** A cursor of a listing in name or revision order, as a page's nextCursor spells it. */
export function cursorAt(order: 'name' | 'revision', name: string, revision = 0): string {
  const key = order === 'name' ? `n:${name}` : `r:${revision}:${name}`;
  return Buffer.from(key, 'utf8').toString('base64url');
}

/**
 * For each index search (Seek*) of the program, the bound values its key is made of, in key
 * order; a key register not loaded from a bound value (a column of another table) is left out.
 */
export function seekKeys(program: Instruction[], values: unknown[]): unknown[][] {
  // Values loaded once before the program starts sit after its Halt, where Init jumps to.
  const halt = program.find((op) => op.opcode === 'Halt')?.addr ?? program.length;
  const loaded = (register: number, before: number): unknown => {
    const loads = program.filter((op) => op.opcode === 'Variable' && op.p2 === register);
    const last =
      loads.filter((op) => op.addr < before).at(-1) ?? loads.find((op) => op.addr > halt);
    return last === undefined ? undefined : values[last.p1 - 1];
  };
  return program
    .filter((op) => /^Seek(GE|GT|LE|LT)$/.test(op.opcode))
    .map((op) =>
      Array.from({ length: Number(op.p4) }, (_, i) => loaded(op.p3 + i, op.addr)).filter(
        (value) => value !== undefined,
      ),
    );
}
