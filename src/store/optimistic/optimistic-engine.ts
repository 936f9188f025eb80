/**
 * load → plan → send, the loop every optimistic store runs. A store supplies its key layout
 * (StoreLayout), how it reads keys and ranges into a call, and `send`: apply planned transitions
 * atomically if every row each planned on (everything in its snapshot's `read`, and every range
 * it expects) is still as it was, answering per transition `true` (applied, or applied already by
 * an earlier send of the same write) or `false` (a conflict: nothing was written, and the current
 * rows of its keys are in its call's `fresh`, its ranges dropped). The engine plans on the guessing
 * snapshot, reads what a plan could not guess, sends, and plans again on a conflict, at most
 * MAX_ATTEMPTS times before it answers store_unavailable with nothing changed.
 *
 * What it keeps for the store: the plan decides and the send only applies, so fences are checked
 * atomically with the write (the send compares the rows the fence decision read); a refusal is
 * thrown only after the send stored its audit entry; a lost answer is the store's to settle
 * (outcome_unknown, or resent under the write's operationId).
 */
import {
  isRangeRef,
  type RangeRef,
  type Ref,
  type Transition,
} from '../../core/plan/transition.js';
import { FencegateError } from '../../errors.js';
import type { KeyCache } from './key-cache.js';
import {
  CallState,
  OptimisticSnapshot,
  RangeMiss,
  type LoadedRange,
  type StoreLayout,
} from './optimistic-snapshot.js';

/** Plans per operation before giving up on rows that keep changing. */
export const MAX_ATTEMPTS = 12;

/** The answer once MAX_ATTEMPTS plans all met rows changed under them. */
export function contention(): FencegateError {
  return new FencegateError(
    'store_unavailable',
    `the rows of this operation changed under it ${MAX_ATTEMPTS} times in a row; nothing was changed, try again`,
  );
}

/** A transition and the snapshot it was planned on. */
export interface Planned<A, S, R extends LoadedRange = LoadedRange> {
  snapshot: OptimisticSnapshot<S, R>;
  transition: Transition<A>;
}

/** A transition's answer as the caller gets it: its value, or its refusal thrown. */
export function answerOf<A>(transition: Transition<A>): A {
  if (!transition.answer.ok) throw transition.answer.error;
  return transition.answer.value;
}

/**
 * The engine over one store. `S` is the store's state of a key (a row and its version), `R` a
 * range as read, `C` what one operation's reads and sends share (a connection, a deadline).
 */
export abstract class OptimisticEngine<S, R extends LoadedRange, C> {
  constructor(
    readonly layout: StoreLayout<S>,
    readonly cache: KeyCache<S>,
    /**
     * Whether a plan that expects a range (without listing it) has it read before it is sent: a
     * store that compares a range by what it read needs it; one that compares "unchanged since
     * the call began" does not.
     */
    private readonly expectedRangesRead = true,
  ) {}

  /** Store time as a plan sees it. */
  abstract now(): number;
  /** Reads ranges of the tenant into the call (their names, and the rows they name if any). */
  abstract loadRanges(
    tenant: string,
    call: CallState<S, R>,
    ranges: RangeRef[],
    context: C,
  ): Promise<void>;
  /** Reads keys into the call's fresh rows (a key without a row reads as absent). */
  abstract loadKeys(tenant: string, call: CallState<S, R>, refs: Ref[], context: C): Promise<void>;
  /** Applies the transitions if what each planned on holds; per transition, whether it applied. */
  abstract send(plans: readonly Planned<unknown, S, R>[], context: C): Promise<boolean[]>;

  snapshot(tenant: string, now: number, call: CallState<S, R>): OptimisticSnapshot<S, R> {
    return new OptimisticSnapshot(tenant, now, this.layout, this.cache, call);
  }

  /**
   * Plans until every range the plan lists (and, when `expectedRangesRead`, expects) is read in
   * this call. A plan that throws on rows it was only guessing (a row never seen, guessed absent)
   * runs again on those rows read. `now` fixes store time for every snapshot (a batch plans at
   * one time); without it each snapshot reads store time after the rows it plans on.
   */
  async plan<A>(
    tenant: string,
    call: CallState<S, R>,
    plan: (snapshot: OptimisticSnapshot<S, R>) => Transition<A>,
    context: C,
    now?: number,
  ): Promise<Planned<A, S, R>> {
    for (;;) {
      const snapshot = this.snapshot(tenant, now ?? this.now(), call);
      let missing: RangeRef | undefined;
      try {
        const transition = plan(snapshot);
        missing = this.expectedRangesRead
          ? transition.expect.find(
              (ref): ref is RangeRef => isRangeRef(ref) && snapshot.loaded(ref) === undefined,
            )
          : undefined;
        if (missing === undefined) return { snapshot, transition };
      } catch (error) {
        if (!(error instanceof RangeMiss)) {
          if (snapshot.unverified.size === 0) throw error;
          const refs = [...snapshot.unverified.values()].map(({ ref }) => ref);
          await this.loadKeys(tenant, call, refs, context);
          continue;
        }
        missing = error.range;
      }
      await this.loadRanges(tenant, call, [missing], context);
    }
  }

  /**
   * Up to `attempts` rounds of plan and send; the transition that applied, or null when every
   * round met a conflict. `fixedTime` plans each round at one store time read at its start.
   */
  async attempt<A>(
    tenant: string,
    call: CallState<S, R>,
    plan: (snapshot: OptimisticSnapshot<S, R>) => Transition<A>,
    context: C,
    options: { attempts?: number; fixedTime?: boolean } = {},
  ): Promise<Transition<A> | null> {
    const { attempts = MAX_ATTEMPTS, fixedTime = false } = options;
    for (let round = 0; round < attempts; round += 1) {
      const planned = await this.plan(
        tenant,
        call,
        plan,
        context,
        fixedTime ? this.now() : undefined,
      );
      const [applied] = await this.send([planned], context);
      if (applied === true) return planned.transition;
    }
    return null;
  }

  /** Plans and applies one operation; its refusal is thrown once the send stored its audit. */
  async applyOne<A>(
    tenant: string,
    plan: (snapshot: OptimisticSnapshot<S, R>) => Transition<A>,
    context: C,
    ranges?: RangeRef[],
  ): Promise<A> {
    const call = new CallState<S, R>();
    if (ranges !== undefined) await this.loadRanges(tenant, call, ranges, context);
    const applied = await this.attempt(tenant, call, plan, context);
    if (applied === null) throw contention();
    return answerOf(applied);
  }
}
