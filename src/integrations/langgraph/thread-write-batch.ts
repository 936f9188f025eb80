/**
 * One commit for the writes a saver is asked for in the same turn of the event loop on the same
 * thread under the same fence. LangGraph stores a step's pending writes and its checkpoint as
 * separate calls (putWrites for each task, then put), issued together: written one by one they
 * cost a commit each, each a durable transaction of its own. Collected until the turn ends, they
 * are written as one commit (record-writer.ts), in the order they were asked for, so a checkpoint
 * record still lands with or after everything it points to; calls that together exceed the write
 * limit take as many commits, each call whole in one of them. Every call is answered only once the
 * whole batch is committed; nothing is answered earlier than it would have been alone.
 *
 * A superseded writer's refusal (a stale fence, a lost lease, a deleted thread) or an outcome in
 * doubt holds for every write of the batch alike and answers every call. A refusal of one call's
 * content (a malformed or oversized value, a revision another writer moved) would otherwise fail
 * its neighbours: then each call is written again on its own and gets the answer it would have
 * had alone.
 */
import type { FencegateApi } from '../../api.js';
import { isFencegateError, type ErrorCode } from '../../errors.js';
import type { IntentRequest } from '../../types.js';
import { writeRecords, type RecordToWrite } from './record-writer.js';

/** One saver call's share of a batch. */
export interface ThreadWrite {
  scope: string;
  fence: number;
  records: RecordToWrite[];
  purpose: string;
  /** Effects the nodes staged, committed with these records (staged-effects.ts). */
  intents?: IntentRequest[];
}

/** How much one commit may hold. */
export interface CommitSize {
  maxWrites: number;
  maxIntents: number;
  /** The version the commits are made under, if the saver names one. */
  policyVersion?: string | undefined;
}

interface Waiting {
  write: ThreadWrite;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Refusals about one call's own writes, not about the writer: the calls are retried apart. */
const REFUSALS_OF_ONE_CALL: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'invalid_request',
  'payload_too_large',
  'stale_revision',
  'incarnation_changed',
  'operation_id_conflict',
]);

export class ThreadWriteBatch {
  readonly #gate: FencegateApi;
  readonly #size: CommitSize;
  /** Per scope and fence, the calls of this turn, in the order they came. */
  #pending = new Map<string, Waiting[]>();
  #scheduled = false;

  constructor(gate: FencegateApi, size: CommitSize) {
    this.#gate = gate;
    this.#size = size;
  }

  /** Settles once the batch holding `write` is committed, or with the answer that refused it. */
  write(write: ThreadWrite): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const key = `${write.fence}\0${write.scope}`;
      const calls = this.#pending.get(key);
      if (calls === undefined) this.#pending.set(key, [{ write, resolve, reject }]);
      else calls.push({ write, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        // setImmediate, not a microtask: LangGraph issues a step's calls across several promise
        // hops of the same turn, and all of them should find the batch still open.
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    const pending = [...this.#pending.values()];
    this.#pending = new Map();
    this.#scheduled = false;
    for (const calls of pending) {
      for (const batch of this.#commitSized(calls)) void this.#commit(batch);
    }
  }

  /**
   * The calls in order, cut into batches of at most one commit each: a call is always written by
   * one commit (unless it alone exceeds the write limit, as it would on its own), so an answer
   * never covers a call of which one part was stored and another refused.
   */
  #commitSized(calls: Waiting[]): Waiting[][] {
    const batches: Waiting[][] = [];
    let batch: Waiting[] = [];
    let records = 0;
    let intents = 0;
    for (const call of calls) {
      const size = call.write.records.length;
      const effects = call.write.intents?.length ?? 0;
      const full =
        records + size > this.#size.maxWrites || intents + effects > this.#size.maxIntents;
      if (batch.length > 0 && full) {
        batches.push(batch);
        batch = [];
        records = 0;
        intents = 0;
      }
      batch.push(call);
      records += size;
      intents += effects;
    }
    if (batch.length > 0) batches.push(batch);
    return batches;
  }

  async #commit(calls: Waiting[]): Promise<void> {
    try {
      await this.#writeAll(calls.map((call) => call.write));
    } catch (error) {
      if (calls.length > 1 && isFencegateError(error) && REFUSALS_OF_ONE_CALL.has(error.code)) {
        await Promise.all(calls.map((call) => this.#commit([call])));
        return;
      }
      for (const call of calls) call.reject(error);
      return;
    }
    for (const call of calls) call.resolve();
  }

  async #writeAll(writes: ThreadWrite[]): Promise<void> {
    const [first] = writes;
    if (first === undefined) return;
    await writeRecords(
      this.#gate,
      {
        scope: first.scope,
        fence: first.fence,
        records: mergeRecords(writes),
        purpose: writes.map((write) => write.purpose).join('\n'),
        intents: mergeIntents(writes),
        ...(this.#size.policyVersion === undefined
          ? {}
          : { policyVersion: this.#size.policyVersion }),
      },
      this.#size.maxWrites,
    );
  }
}

/**
 * The calls' records in order, one per name: a commit names a record once. A record kept once
 * written (a blob, a regular pending write) keeps its first value, as a second call would have
 * found it stored; a record a later call replaces (a special channel's slot) takes the later value,
 * at the later position.
 */
function mergeRecords(writes: ThreadWrite[]): RecordToWrite[] {
  const byName = new Map<string, RecordToWrite>();
  for (const write of writes) {
    for (const record of write.records) {
      const earlier = byName.get(record.name);
      if (earlier !== undefined && record.keepExisting === true) continue;
      byName.delete(record.name);
      byName.set(record.name, record);
    }
  }
  return [...byName.values()];
}

/** The calls' effects, each key once (two tasks never share one: a key names its task). */
function mergeIntents(writes: ThreadWrite[]): IntentRequest[] {
  const byKey = new Map<string, IntentRequest>();
  for (const write of writes) {
    for (const intent of write.intents ?? []) byKey.set(intent.effectKey, intent);
  }
  return [...byKey.values()];
}
