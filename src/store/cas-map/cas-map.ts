/**
 * The map a CasMapStore keeps its rows in, shaped like a remote key-value store with
 * compare-and-set (Redis WATCH/MULTI, DynamoDB conditional writes): reads answer a key's row and
 * version, and a write applies only if every key it compares is still at the version it names
 * and every range it compares still lists the names it read; otherwise it changes nothing and
 * answers the current states. Each call yields to the event loop first, as a round trip would, so
 * concurrent writers of one process interleave between a read and a send.
 *
 * Faults to exercise a store's paths: `interfere(n)` has another writer rewrite a compared key
 * just before each of the next n writes that rewrite a stored row (a conflict, so the engine plans again), and
 * `loseAnswers(n)` applies the next n writes and loses their answers.
 */
import type { MemoryTables, NewAuditEntry, Put, RangeRef, Ref } from '../../adapter/index.js';
import { MemorySnapshot, refKey } from '../../adapter/index.js';

export interface CasState {
  /** 0 for a key never written. */
  version: number;
  row: Put['row'] | null;
}

export interface CasWrite {
  tenant: string;
  /** Keys (refKey of `ref`) and the version the write planned on. */
  compare: { ref: Ref; version: number }[];
  /** Ranges and the names the write planned on. */
  ranges: { range: RangeRef; names: string[] }[];
  puts: Put[];
  /** Keys removed, each among the compared ones. */
  deletes?: Ref[];
  audit: NewAuditEntry[];
}

export type CasAnswer =
  | { applied: true; versions: Map<string, number> }
  | { applied: false; current: Map<string, CasState> };

/** What a write whose answer was lost throws: it may have applied. */
export class LostAnswer extends Error {
  constructor() {
    super('the answer of a write was lost');
  }
}

/** What any call on a closed map throws: nothing was read or changed. */
export class MapClosed extends Error {
  constructor() {
    super('the map is closed');
  }
}

export class CasMap {
  #interfere = 0;
  #loseAnswers = 0;
  #closed = false;

  constructor(private readonly tables: MemoryTables) {}

  interfere(writes: number): void {
    this.#interfere = writes;
  }

  loseAnswers(writes: number): void {
    this.#loseAnswers = writes;
  }

  close(): void {
    this.#closed = true;
  }

  async read(tenant: string, keys: readonly string[]): Promise<CasState[]> {
    await this.#roundTrip();
    return keys.map((key) => this.#state(tenant, key));
  }

  async list(tenant: string, ranges: readonly RangeRef[]): Promise<string[][]> {
    await this.#roundTrip();
    return ranges.map((range) => this.#names(tenant, range));
  }

  async compareAndSet(write: CasWrite): Promise<CasAnswer> {
    await this.#roundTrip();
    const { tenant } = write;
    if (this.#interfere > 0) this.#rewriteOne(write);
    const held =
      write.compare.every(
        ({ ref, version }) => this.tables.version(tenant, refKey(ref)) === version,
      ) && write.ranges.every(({ range, names }) => sameNames(this.#names(tenant, range), names));
    if (!held) {
      const current = new Map<string, CasState>();
      for (const { ref } of write.compare)
        current.set(refKey(ref), this.#state(tenant, refKey(ref)));
      return { applied: false, current };
    }
    for (const put of write.puts) this.tables.put(tenant, put);
    for (const ref of write.deletes ?? []) this.tables.delete(tenant, ref);
    for (const entry of write.audit) this.tables.append(entry);
    const versions = new Map<string, number>();
    for (const ref of [
      ...write.puts.map(({ row: _row, ...ref }) => ref),
      ...(write.deletes ?? []),
    ]) {
      versions.set(refKey(ref), this.tables.version(tenant, refKey(ref)));
    }
    if (this.#loseAnswers > 0) {
      this.#loseAnswers -= 1;
      throw new LostAnswer();
    }
    return { applied: true, versions };
  }

  /**
   * Another writer stores a row this write also writes again (same content, new version): the
   * write's own contention, not a shared row's, which would fail every concurrent writer at once.
   */
  #rewriteOne({ tenant, puts }: CasWrite): void {
    for (const { row: _row, ...ref } of puts) {
      const row = this.tables.row(tenant, refKey(ref));
      if (row === null) continue;
      this.tables.put(tenant, { ...ref, row } as Put);
      this.#interfere -= 1;
      return;
    }
  }

  #state(tenant: string, key: string): CasState {
    return { version: this.tables.version(tenant, key), row: this.tables.row(tenant, key) };
  }

  #names(tenant: string, range: RangeRef): string[] {
    return new MemorySnapshot(tenant, 0, this.tables).list(range);
  }

  async #roundTrip(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    if (this.#closed) throw new MapClosed();
  }
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name, i) => name === b[i]);
}
