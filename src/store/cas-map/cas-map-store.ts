/**
 * A compare-and-set map store on the optimistic engine: the worked example of a store written on
 * `fencegate/adapter` alone (every import of this folder comes from it), and the store the
 * conformance suite and the model check run with conflicts injected. Writes go through the engine
 * (guess, plan, compare-and-set, plan again on a conflict); reads answer from the same rows as the
 * in-memory reference store, whose read methods it inherits: the map keeps its rows in the memory
 * store's tables, with a version per key. In process only, gone when the process ends; not a
 * store kind to deploy (docs/adapters.md).
 */
import {
  MemoryStore,
  systemClock,
  type AuditPosition,
  type Clock,
  type PlannedWrite,
  type WriteSettlement,
} from '../../adapter/index.js';
import { CasMap } from './cas-map.js';
import { CasMapEngine } from './cas-map-engine.js';

export interface CasMapStoreOptions {
  clock?: Clock;
  /** Tests only: the scopes one cutover chunk moves, 1 to 1,000 (default 1,000). */
  cutoverChunk?: number;
}

export class CasMapStore extends MemoryStore {
  override readonly kind = 'cas-map';
  /** The map, for tests to inject conflicts and lost answers. */
  readonly map: CasMap;
  readonly #engine: CasMapEngine;

  constructor(options: CasMapStoreOptions = {}) {
    super(options);
    this.map = new CasMap(this.tables);
    this.#engine = new CasMapEngine(this.map, options.clock ?? systemClock);
  }

  protected override apply<A>({ tenant, plan, ranges, operationId }: PlannedWrite<A>): Promise<A> {
    return this.#engine.applyOne(tenant, plan, { operationId }, ranges);
  }

  /** One compare-and-set per write, in order, each settled on its own. */
  protected override async applyTogether(
    writes: PlannedWrite<unknown>[],
  ): Promise<WriteSettlement[]> {
    const settled: WriteSettlement[] = [];
    for (const write of writes) {
      try {
        settled.push({ ok: true, value: await this.apply(write) });
      } catch (error) {
        settled.push({ ok: false, error });
      }
    }
    return settled;
  }

  /** Entries up to the last seq read now happened before the cutover's first step. */
  protected override async cutoverStartPosition(): Promise<AuditPosition> {
    const lastSeq = await this.whenOpen(() => this.tables.lastSeq);
    return () => lastSeq;
  }

  override async close(): Promise<void> {
    this.map.close();
    await super.close();
  }
}
