/**
 * FencedSession: an OpenAI Agents SDK session whose history lives in fencegate, written only by
 * the run that claimed it. `FencedSession.claim` takes the session's scope for one run; every
 * write carries that claim's fence, so once a newer claim (any process, any host) has moved the
 * fence, the older run's writes are refused with StaleSessionOwnerError and store nothing.
 *
 * Every change is one fenced commit that expects the history head it was planned on (see
 * history-writes.ts), so concurrent writers of one claim never lose each other's items: appends
 * are planned again on the newer history; a suffix replacement or a compaction whose
 * precondition no longer holds is refused with SessionHistoryConflictError, changing nothing.
 *
 * A compaction (`replaceHistoryWithCompaction`) replaces the history as the caller last read it:
 * items appended after that read (by this run or another writer of its claim) are kept after the
 * replacement, in order. Reads are tracked per run context, so a runner's read and its
 * compaction pair up even when several runs share the object.
 */
import type { FencegateApi } from '../../api.js';
import { canonicalJson, fingerprint } from '../../core/canonical.js';
import { FencegateError } from '../../errors.js';
import type { WriteRequest } from '../../types.js';
import type { HeldLease } from '../lease-keeper.js';
import { escapeName, fitName } from '../name-escape.js';
import { keepRenewed } from '../langgraph/lease-renewal.js';
import type {
  AgentInputItem,
  RunContext,
  RunContextAwareSession,
  SessionHistoryTransactionArgs,
  SessionHistoryTransactionAwareSession,
} from './agents-types.js';
import { collectGarbage } from './history-garbage.js';
import { readHead, readHistory, readItemsAt, type HeadState } from './history-reads.js';
import {
  MAX_CHANGE_WRITES,
  commitChange,
  placeItems,
  type SessionScope,
} from './history-writes.js';
import { claimSession, type WhenSessionBusy } from './session-claim.js';
import { SessionHistoryConflictError } from './session-errors.js';
import { copyItems, copyTransaction } from './session-items.js';
import {
  DEFAULT_SESSION_SCOPE_PREFIX,
  operationName,
  type HistoryHead,
} from './session-records.js';

export interface FencedSessionOptions {
  sessionId: string;
  /** Names the worker in the lease and the audit log; each claim adds an id of its own. */
  holder: string;
  /** The claim's lease, renewed every third of it while the session is held. Default 60,000. */
  ttlMs?: number;
  /** When another run holds the session: fail `lease_held` (default), wait, or take it over. */
  whenBusy?: WhenSessionBusy;
  /** Stops a wait. */
  signal?: AbortSignal;
  /** Default `openai-agents/`: the session's scope is the prefix and the escaped session id. */
  scopePrefix?: string;
}

/** Where a reader's last read left the history: what a compaction of theirs replaces. */
interface ReadMark {
  epoch: number;
  cut: number;
  next: number;
}

interface Popped {
  item: AgentInputItem | undefined;
  head: HistoryHead;
}

type Planned<T> =
  | { head: HistoryHead; writes: WriteRequest[]; answer: T }
  | { unchanged: true; answer: T }
  | { reread: true };

/** Changes planned again after another writer's before one gives up: only a storm does that. */
const MAX_PLANS = 50;
const DEFAULT_TTL_MS = 60_000;

export class FencedSession
  implements RunContextAwareSession, SessionHistoryTransactionAwareSession
{
  readonly acceptsRunContext = true as const;
  readonly sessionId: string;
  readonly scope: string;
  readonly #gate: FencegateApi;
  readonly #lease: HeldLease;
  readonly #stopRenewing: () => void;
  readonly #marks = new WeakMap<object, ReadMark>();
  /** The head this object last wrote or read: appends plan on it without reading it first. */
  #known: HeadState | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(
    gate: FencegateApi,
    sessionId: string,
    scope: string,
    lease: HeldLease,
    ttlMs: number,
  ) {
    this.#gate = gate;
    this.sessionId = sessionId;
    this.scope = scope;
    this.#lease = lease;
    this.#stopRenewing = keepRenewed(lease, ttlMs);
  }

  /**
   * Claims the session for one run. In process `gate` is a Fencegate; over HTTP a
   * FencegateClient with a worker token (an operator token, or a worker token with a take-over
   * right, for `whenBusy: 'takeOver'`).
   */
  static async claim(gate: FencegateApi, options: FencedSessionOptions): Promise<FencedSession> {
    const scope = fitName(
      `${options.scopePrefix ?? DEFAULT_SESSION_SCOPE_PREFIX}${escapeName(options.sessionId)}`,
    );
    const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    const lease = await claimSession(gate, {
      scope,
      sessionId: options.sessionId,
      holder: options.holder,
      ttlMs,
      whenBusy: options.whenBusy ?? 'fail',
      signal: options.signal,
    });
    return new FencedSession(gate, options.sessionId, scope, lease, ttlMs);
  }

  /** The fence this run writes under. */
  get fence(): number {
    return this.#lease.fence;
  }

  /** Aborts once this run is known to be superseded or its lease ran out. */
  get signal(): AbortSignal {
    return this.#lease.signal;
  }

  getSessionId(): Promise<string> {
    return Promise.resolve(this.sessionId);
  }

  async getItems(limit?: number, runContext?: RunContext): Promise<AgentInputItem[]> {
    if (limit !== undefined && limit <= 0) return [];
    const read = await readHistory(this.#gate, this.scope, limit);
    this.#known = read.state;
    this.#mark(runContext, read.state.head);
    return read.items.map((stored) => stored.item as AgentInputItem);
  }

  async addItems(items: AgentInputItem[], _runContext?: RunContext): Promise<void> {
    const copied = copyItems(items, 'items');
    // One commit holds a bounded number of writes: a long append lands chunk by chunk, in order.
    for (let start = 0; start < copied.length; start += MAX_CHANGE_WRITES) {
      const chunk = copied.slice(start, start + MAX_CHANGE_WRITES);
      await this.#change(false, (state) => Promise.resolve(this.#planAppend(state, chunk, [])));
    }
  }

  async popItem(runContext?: RunContext): Promise<AgentInputItem | undefined> {
    const popped = await this.#change(true, async (state): Promise<Planned<Popped>> => {
      const { first, next } = state.head;
      if (next === first) return { unchanged: true, answer: { item: undefined, head: state.head } };
      const last = await readItemsAt(this.#gate, this.scope, state, next - 1, next);
      if (last === null || last[0] === undefined) return { reread: true };
      const head = cutHead(state.head, { next: next - 1 });
      head.stale[next - 1] = last[0].revision;
      return { head, writes: [], answer: { item: last[0].item as AgentInputItem, head } };
    });
    this.#mark(runContext, popped.head);
    return popped.item;
  }

  async clearSession(runContext?: RunContext): Promise<void> {
    const head = await this.#change(true, (state) => {
      const cleared = cutHead(state.head, { first: state.head.next, epoch: state.head.epoch + 1 });
      return Promise.resolve({ head: cleared, writes: [], answer: cleared });
    });
    this.#mark(runContext, head);
    await collectGarbage(this.#target(), head);
  }

  async applyHistoryTransaction(
    args: SessionHistoryTransactionArgs,
    runContext?: RunContext,
  ): Promise<void> {
    const { operationId, transaction } = copyTransaction(args);
    const print = fingerprint(transaction);
    const limit = MAX_CHANGE_WRITES - 1;
    const count =
      transaction.type === 'append_items'
        ? transaction.items.length
        : transaction.replacement.length;
    if (count > limit) {
      throw new FencegateError(
        'invalid_request',
        `a history transaction writes at most ${limit} items in one commit, this one ${count}: split it into several operations`,
        { field: 'transaction', limit },
      );
    }
    const head = await this.#change(true, async (state): Promise<Planned<HistoryHead | null>> => {
      const name = operationName(state.head.epoch, operationId);
      const recorded = await this.#gate.getRecord(this.scope, name);
      if (recorded.exists) {
        if ((recorded.value as { fingerprint?: unknown }).fingerprint === print) {
          return { unchanged: true, answer: null };
        }
        throw new SessionHistoryConflictError(
          this.sessionId,
          'operation_id_conflict',
          `operation ${JSON.stringify(operationId)} was already applied with another transaction; nothing changed. Give a new transaction a new operation id`,
          { operationId },
        );
      }
      const marker: WriteRequest = {
        name,
        expectRevision: recorded.revision,
        value: { fingerprint: print },
      };
      if (transaction.type === 'append_items') {
        return { ...this.#planAppend(state, transaction.items, [marker]), answer: null };
      }
      return await this.#planReplaceSuffix(
        state,
        transaction.expectedSuffix,
        transaction.replacement,
        marker,
      );
    });
    // A replacement is a cut this reader made: its next compaction replaces it, not conflicts.
    if (head !== null && transaction.type === 'replace_suffix') this.#mark(runContext, head);
  }

  async replaceHistoryWithCompaction(
    items: AgentInputItem[],
    runContext?: RunContext,
  ): Promise<void> {
    const replacement = copyItems(items, 'items');
    const mark = this.#marks.get(runContext ?? this);
    const head = await this.#change(true, async (state): Promise<Planned<HistoryHead>> => {
      const { epoch, cut, next } = state.head;
      let carried: unknown[] = [];
      if (mark !== undefined) {
        if (mark.epoch !== epoch || mark.cut !== cut || mark.next > next) {
          throw new SessionHistoryConflictError(
            this.sessionId,
            'stale_revision',
            'the history was popped, replaced, cleared or compacted since this reader last read it, so this compaction would drop changes it never saw; nothing changed. Read the history again and compact what it holds',
          );
        }
        const appended = await readItemsAt(this.#gate, this.scope, state, mark.next, next);
        if (appended === null) return { reread: true };
        carried = appended.map((stored) => stored.item);
      }
      const all = [...replacement, ...carried];
      if (all.length > MAX_CHANGE_WRITES) {
        throw new FencegateError(
          'invalid_request',
          `a compaction writes at most ${MAX_CHANGE_WRITES} items in one commit (its replacement and the ${carried.length} items appended since it read), this one ${all.length}: keep fewer items after the compaction item`,
          { field: 'items', limit: MAX_CHANGE_WRITES },
        );
      }
      const compacted = cutHead(state.head, { first: next, next: next + all.length });
      const writes = placeItems(all, next, (p) => state.head.stale[p] ?? 0, compacted.stale);
      return { head: compacted, writes, answer: compacted };
    });
    this.#mark(runContext, head);
    await collectGarbage(this.#target(), head);
  }

  /** Gives the session up: the next claim needs no takeover, and this run's writes are refused. */
  async release(): Promise<void> {
    this.#stopRenewing();
    await this.#lease.release();
  }

  #planAppend(
    state: HeadState,
    items: readonly unknown[],
    extra: WriteRequest[],
  ): Planned<undefined> {
    const stale = { ...state.head.stale };
    const writes = placeItems(items, state.head.next, (p) => stale[p] ?? 0, stale);
    const head = { ...state.head, next: state.head.next + items.length, stale };
    return { head, writes: [...writes, ...extra], answer: undefined };
  }

  async #planReplaceSuffix(
    state: HeadState,
    expected: readonly unknown[],
    replacement: readonly unknown[],
    marker: WriteRequest,
  ): Promise<Planned<HistoryHead>> {
    const { first, next } = state.head;
    const from = next - expected.length;
    const suffix = from < first ? [] : await readItemsAt(this.#gate, this.scope, state, from, next);
    if (suffix === null) return { reread: true };
    const matches =
      from >= first &&
      suffix.every(
        (stored, index) => canonicalJson(stored.item) === canonicalJson(expected[index]),
      );
    if (!matches) {
      throw new SessionHistoryConflictError(
        this.sessionId,
        'stale_revision',
        'the history no longer ends with the expected suffix; nothing changed and the operation id was not recorded',
      );
    }
    const revisions = new Map(suffix.map((stored) => [stored.position, stored.revision]));
    const head =
      expected.length === 0
        ? { ...state.head, stale: { ...state.head.stale } }
        : cutHead(state.head, {});
    head.next = from + replacement.length;
    const writes = placeItems(
      replacement,
      from,
      (p) => revisions.get(p) ?? state.head.stale[p] ?? 0,
      head.stale,
    );
    for (const [position, revision] of revisions) {
      if (position >= head.next) head.stale[position] = revision;
    }
    return { head, writes: [...writes, marker], answer: head };
  }

  /**
   * Plans a change on the history head and commits it, planning again while other writers move
   * the head first. `fresh` plans read the head from the store; appends start from the head this
   * object last saw. Changes of this object run one at a time.
   */
  #change<T>(fresh: boolean, plan: (state: HeadState) => Promise<Planned<T>>): Promise<T> {
    const run = this.#queue.then(async () => {
      let known = fresh ? undefined : this.#known;
      for (let attempt = 0; attempt < MAX_PLANS; attempt += 1) {
        const state = known ?? (await readHead(this.#gate, this.scope));
        known = undefined;
        const planned = await plan(state);
        if ('reread' in planned) continue;
        if ('unchanged' in planned) return planned.answer;
        const outcome = await commitChange(this.#target(), state, planned.head, planned.writes);
        if (outcome.moved) continue;
        this.#known = outcome.state;
        return planned.answer;
      }
      throw new FencegateError(
        'store_unavailable',
        `the history of session ${this.sessionId} changed under ${MAX_PLANS} attempts of one change; try again`,
        { sessionId: this.sessionId },
      );
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  #mark(runContext: RunContext | undefined, head: HistoryHead): void {
    const mark = { epoch: head.epoch, cut: head.cut, next: head.next };
    this.#marks.set(this, mark);
    if (runContext !== undefined) this.#marks.set(runContext, mark);
  }

  #target(): SessionScope {
    return { gate: this.#gate, scope: this.scope, sessionId: this.sessionId, fence: this.fence };
  }
}

/** A head after a change that is not an append: `cut` moves, `stale` is a copy to edit. */
function cutHead(head: HistoryHead, change: Partial<HistoryHead>): HistoryHead {
  return { ...head, ...change, cut: head.cut + 1, stale: { ...head.stale } };
}
