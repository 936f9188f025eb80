/**
 * A plan's view of one tenant in memory. The store applies a plan before it answers anything else,
 * so every row read here holds until the transition is applied: `expect` needs no checking.
 */
import type { RangeRef, RefOf, Rows, RowType, Snapshot } from '../../core/plan/transition.js';
import { OPEN_INTENT_STATUSES } from '../plan-rows.js';
import { byCodeUnit, type MemoryTables } from './memory-tables.js';

export class MemorySnapshot implements Snapshot {
  constructor(
    readonly tenant: string,
    readonly now: number,
    private readonly tables: MemoryTables,
  ) {}

  get<K extends RowType>(ref: RefOf<K>): Rows[K] | null {
    return this.tables.get(this.tenant, ref);
  }

  /** Every name of the range; a range with `due` may list more than it asks, never fewer. */
  list(range: RangeRef): string[] {
    if (range.type === 'page') {
      const { of } = range;
      const all =
        of.type === 'cutoverScopes'
          ? (this.tables.get(this.tenant, { type: 'cutover', cutoverId: of.cutoverId })?.scopes ??
            [])
          : this.list(of);
      return all.filter((name) => name > range.after).slice(0, range.limit);
    }
    const { tables, tenant } = this;
    const names: string[] = [];
    switch (range.type) {
      case 'scopeRecords':
        for (const { ref } of tables.rowsOf(tenant, 'record')) {
          if (ref.type === 'record' && ref.scope === range.scope) names.push(ref.name);
        }
        break;
      case 'scopeIntents':
        for (const { ref, row } of tables.rowsOf(tenant, 'intent')) {
          if (ref.type === 'intent' && row.scope === range.scope) names.push(ref.effectKey);
        }
        break;
      case 'openIntents':
        for (const { ref, row } of tables.rowsOf(tenant, 'intent')) {
          if (ref.type === 'intent' && OPEN_INTENT_STATUSES.has(row.status))
            names.push(ref.effectKey);
        }
        break;
      case 'scopes':
        for (const { ref } of tables.rowsOf(tenant, 'scope')) {
          if (ref.type === 'scope' && ref.scope.startsWith(range.prefix)) names.push(ref.scope);
        }
        break;
      case 'cutoverSteps':
        for (const { ref } of tables.rowsOf(tenant, 'cutoverStep')) {
          if (ref.type === 'cutoverStep' && ref.cutoverId === range.cutoverId) {
            names.push(ref.scope);
          }
        }
        break;
      case 'rolloutKeys':
        for (const { ref } of tables.rowsOf(tenant, 'rollout')) {
          if (ref.type === 'rollout' && ref.key.startsWith(range.prefix)) names.push(ref.key);
        }
        break;
    }
    return names.sort(byCodeUnit);
  }
}
