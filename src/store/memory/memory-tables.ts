/**
 * What the in-memory reference store holds: every tenant's rows by ref, the audit log, tokens and
 * the store's marks. Rows are kept as written and handed out as copies, so neither a plan nor a
 * caller can change a stored row behind the store's back.
 */
import { randomUUID } from 'node:crypto';
import type { NewAuditEntry } from '../../core/audit-entry.js';
import {
  refKey,
  type Put,
  type Ref,
  type RefOf,
  type Rows,
  type RowType,
} from '../../core/plan/transition.js';
import type { AuditEntry, TokenRecord } from '../../types.js';

export interface StoredRow {
  ref: Ref;
  row: Rows[RowType];
}

export class MemoryTables {
  readonly #tenants = new Map<string, Map<string, StoredRow>>();
  readonly audit: AuditEntry[] = [];
  #lastSeq = 0;
  readonly tokens = new Map<string, TokenRecord>();
  firstRunTokensMade = false;
  readonly storeId = randomUUID();
  auditPrunedThrough = 0;
  auditPrunedHash: string | null = null;
  verified: { lastSeq: number; checkpoint: string } | null = null;

  get<K extends RowType>(tenant: string, ref: RefOf<K>): Rows[K] | null {
    const stored = this.#tenants.get(tenant)?.get(refKey(ref as Ref));
    return stored === undefined ? null : (structuredClone(stored.row) as Rows[K]);
  }

  /** Every stored row of one type in a tenant, in no particular order. */
  *rowsOf<K extends RowType>(tenant: string, type: K): Generator<{ ref: Ref; row: Rows[K] }> {
    for (const stored of this.#tenants.get(tenant)?.values() ?? []) {
      if (stored.ref.type === type) yield { ref: stored.ref, row: stored.row as Rows[K] };
    }
  }

  tenants(): string[] {
    return [...this.#tenants.keys()].sort(byCodeUnit);
  }

  put(tenant: string, put: Put): void {
    let rows = this.#tenants.get(tenant);
    if (rows === undefined) {
      rows = new Map();
      this.#tenants.set(tenant, rows);
    }
    const { row, ...ref } = put;
    rows.set(refKey(ref), { ref: ref, row: structuredClone(row) });
  }

  delete(tenant: string, ref: Ref): void {
    this.#tenants.get(tenant)?.delete(refKey(ref));
  }

  append(entry: NewAuditEntry): void {
    this.#lastSeq += 1;
    this.audit.push({ ...structuredClone(entry), seq: this.#lastSeq });
  }

  get lastSeq(): number {
    return this.#lastSeq;
  }
}

/** The order every listing of names follows (SQLite's BINARY collation for names below U+FFFF). */
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
