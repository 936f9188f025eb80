/**
 * The optimistic engine on a CasMap: all a store of this shape supplies. Keys are the rows' refKey
 * within the tenant, ranges their JSON; a send compares every row the plan read (guessed or read)
 * and every range it expects, so the plan's decision holds when the write applies.
 */
import {
  KeyCache,
  OptimisticEngine,
  outcomeUnknown,
  refKey,
  storeUnavailable,
  isRangeRef,
  wholeRowPut,
  type Clock,
  type OptimisticPlanned,
  type CallState,
  type RangeRef,
  type Ref,
  type StoreLayout,
} from '../../adapter/index.js';
import { LostAnswer, MapClosed, type CasMap, type CasState, type CasWrite } from './cas-map.js';

interface CasRange {
  names: string[];
}

/** What one operation's sends share: the operationId an outcome_unknown names. */
export interface CasSend {
  operationId?: string;
}

const LAYOUT: StoreLayout<CasState> = {
  key: (_tenant, ref) => refKey(ref),
  range: (_tenant, range) => JSON.stringify(range),
  absent: { version: 0, row: null },
  rowOf: (state) => state.row,
};

const PLACE = 'the in-process CAS map';

export class CasMapEngine extends OptimisticEngine<CasState, CasRange, CasSend> {
  constructor(
    private readonly map: CasMap,
    private readonly clock: Clock,
  ) {
    super(LAYOUT, new KeyCache<CasState>());
  }

  /** The map has no clock: this process's, read after the rows a plan decides on. */
  now(): number {
    return this.clock.now();
  }

  async loadKeys(tenant: string, call: CallState<CasState, CasRange>, refs: Ref[]): Promise<void> {
    const keys = refs.map(refKey);
    const states = await this.#call(() => this.map.read(tenant, keys));
    keys.forEach((key, i) => this.#learn(tenant, call, key, states[i] ?? LAYOUT.absent));
  }

  async loadRanges(
    tenant: string,
    call: CallState<CasState, CasRange>,
    ranges: RangeRef[],
  ): Promise<void> {
    const lists = await this.#call(() => this.map.list(tenant, ranges));
    ranges.forEach((range, i) =>
      call.ranges.set(LAYOUT.range(tenant, range), { names: lists[i] ?? [] }),
    );
  }

  /** Each plan is one compare-and-set; a batch of several is sent one by one. */
  async send(
    plans: readonly OptimisticPlanned<unknown, CasState, CasRange>[],
    { operationId }: CasSend,
  ): Promise<boolean[]> {
    const applied: boolean[] = [];
    for (const { snapshot, transition } of plans) {
      const { tenant, call } = snapshot;
      for (const ref of transition.expect) if (!isRangeRef(ref)) snapshot.state(ref);
      for (const { row: _row, ...ref } of transition.put) snapshot.state(ref);
      for (const ref of transition.delete ?? []) snapshot.state(ref);
      const write: CasWrite = {
        tenant,
        compare: [...snapshot.read.values()].map(({ ref, state }) => ({
          ref,
          version: state.version,
        })),
        ranges: transition.expect.filter(isRangeRef).map((range) => ({
          range,
          names: snapshot.loaded(range)?.names ?? [],
        })),
        // The adapter keeps whole rows: a cutover's put adds names to the list it read.
        puts: transition.put.map((put) => wholeRowPut(put, snapshot.state(put).row)),
        deletes: transition.delete ?? [],
        audit: transition.audit,
      };
      const answer = await this.#call(() => this.map.compareAndSet(write), operationId);
      if (answer.applied) {
        for (const put of write.puts) {
          const key = refKey(put);
          this.cache.set(tenant, key, { version: answer.versions.get(key) ?? 0, row: put.row });
        }
        for (const ref of transition.delete ?? []) {
          const key = refKey(ref);
          this.cache.set(tenant, key, { version: answer.versions.get(key) ?? 0, row: null });
        }
      } else {
        for (const [key, state] of answer.current) this.#learn(tenant, call, key, state);
        call.ranges.clear();
      }
      applied.push(answer.applied);
    }
    return applied;
  }

  #learn(tenant: string, call: CallState<CasState, CasRange>, key: string, state: CasState): void {
    call.fresh.set(key, state);
    this.cache.set(tenant, key, state);
  }

  /** The map's faults as catalog answers: closed is unavailable, a lost answer unknown. */
  async #call<T>(work: () => Promise<T>, operationId?: string): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof MapClosed) throw storeUnavailable(PLACE, 'closed', error);
      if (error instanceof LostAnswer) {
        throw outcomeUnknown(`${PLACE} lost the answer`, error, operationId);
      }
      throw error;
    }
  }
}
