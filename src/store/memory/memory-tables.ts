/**
 * What the in-memory reference store holds: every tenant's rows by ref, the audit log, tokens and
 * the store's marks. Rows are kept as written and handed out as copies, so neither a plan nor a
 * caller can change a stored row behind the store's back. Every write or deletion of a key gives
 * it a new version (one counter for all keys): what a compare-and-set store kept in these tables
 * compares (src/store/cas-map).
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
  readonly #versions = new Map<string, Map<string, number>>();
  #revision = 0;
  readonly audit: AuditEntry[] = [];
  #lastSeq = 0;
  readonly tokens = new Map<string, TokenRecord>();
  firstRunTokensMade = false;
  readonly storeId = randomUUID();
  auditPrunedThrough = 0;
  auditPrunedHash: string | null = null;
  verified: { lastSeq: number; checkpoint: string } | null = null;

  get<K extends RowType>(tenant: string, ref: RefOf<K>): Rows[K] | null {
    return this.row(tenant, refKey(ref as Ref)) as Rows[K] | null;
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
    const key = refKey(ref);
    rows.set(key, { ref: ref, row: structuredClone(row) });
    this.#changed(tenant, key);
  }

  delete(tenant: string, ref: Ref): void {
    const key = refKey(ref);
    if (this.#tenants.get(tenant)?.delete(key) === true) this.#changed(tenant, key);
  }

  /** The key's version: 0 for a key never written, a new one after each write or deletion. */
  version(tenant: string, key: string): number {
    return this.#versions.get(tenant)?.get(key) ?? 0;
  }

  /** The row stored under a key (by its refKey), as a copy. */
  row(tenant: string, key: string): Rows[RowType] | null {
    const stored = this.#tenants.get(tenant)?.get(key);
    return stored === undefined ? null : structuredClone(stored.row);
  }

  #changed(tenant: string, key: string): void {
    let versions = this.#versions.get(tenant);
    if (versions === undefined) {
      versions = new Map();
      this.#versions.set(tenant, versions);
    }
    this.#revision += 1;
    versions.set(key, this.#revision);
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
