/**
 * The write-ownership clauses, one function each: what a checkpointer must do when two writers
 * hold the same thread one after the other. They are the 15 clauses of LangGraph's
 * `write_ownership` capability (langchain-ai/langgraph#8894), stated for LangGraph.js, so a thread
 * keeps the same rules whichever language its workers are written in.
 *
 * The failure they describe: worker A is paused inside a node, worker B takes the thread over and
 * finishes, then A wakes and writes. Unfenced, A's pending write is silently dropped (or, on a
 * special channel, replaces B's), and A's next checkpoint forks the chain and becomes the tip.
 *
 * A refusal is recognised by a marker, not a class: the error (or the one thrown by the writer's
 * optional `checkWriteOwnership()` barrier) carries `isStaleWriteOwnerError: true`, so a
 * checkpointer needs nothing of this package at run time. Reads always go through the
 * checkpointer itself, never through a claimed writer: a writer need not be able to read.
 *
 * Only types come from LangGraph here, so importing fencegate/testing/vitest loads no optional
 * peer; the checkpointer under test brings LangGraph with it.
 */
import { randomBytes } from 'node:crypto';
import type { RunnableConfig } from '@langchain/core/runnables';
import type {
  BaseCheckpointSaver,
  ChannelVersions,
  Checkpoint,
  CheckpointMetadata,
  PendingWrite,
} from '@langchain/langgraph-checkpoint';

/** What a claim answers: something that writes the thread while it owns it. */
export interface WriteOwnershipWriter {
  put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig>;
  putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void>;
  /** Throws the marked refusal when this writer was superseded; for savers that refuse late. */
  checkWriteOwnership?(): Promise<void>;
}

/** A checkpointer with write ownership: claiming a thread supersedes its current owner. */
export interface WriteOwnershipCheckpointer extends BaseCheckpointSaver {
  claimWriteOwnership(threadId: string): Promise<WriteOwnershipWriter>;
}

type Clause = (saver: WriteOwnershipCheckpointer) => Promise<void>;

/** A failed clause: the message says what the checkpointer did instead. */
export class WriteOwnershipViolation extends Error {
  override readonly name = 'WriteOwnershipViolation';
}

function check(condition: boolean, message: () => string): void {
  if (!condition) throw new WriteOwnershipViolation(message());
}

let lastMillis = 0;
let sequence = 0;

/**
 * A time-ordered UUID (version 7 layout), increasing within one process even inside one
 * millisecond: checkpoint ids must sort in the order they were written, as LangGraph's do.
 */
export function orderedId(): string {
  const now = Date.now();
  sequence = now === lastMillis ? sequence + 1 : 0;
  lastMillis = now;
  const time = now.toString(16).padStart(12, '0');
  const counter = (sequence & 0xfff).toString(16).padStart(3, '0');
  const random = randomBytes(8).toString('hex');
  const variant = ((parseInt(random.slice(0, 1), 16) & 0x3) | 0x8).toString(16);
  return `${time.slice(0, 8)}-${time.slice(8)}-7${counter}-${variant}${random.slice(1, 4)}-${random.slice(4, 16)}`;
}

function newThread(): string {
  return `write-ownership-${orderedId()}`;
}

export function configOf(threadId: string, checkpointId?: string): RunnableConfig {
  return {
    configurable: {
      thread_id: threadId,
      checkpoint_ns: '',
      ...(checkpointId === undefined ? {} : { checkpoint_id: checkpointId }),
    },
  };
}

/** Writes one empty checkpoint (a child of `parent` when given); answers its id. */
export async function putCheckpoint(
  writer: WriteOwnershipWriter,
  threadId: string,
  step: number,
  parent?: string,
): Promise<string> {
  const checkpoint: Checkpoint = {
    v: 4,
    id: orderedId(),
    ts: new Date().toISOString(),
    channel_values: {},
    channel_versions: {},
    versions_seen: {},
  };
  const metadata: CheckpointMetadata = { source: 'loop', step, parents: {} };
  const stored = await writer.put(configOf(threadId, parent), checkpoint, metadata, {});
  return String(stored.configurable?.checkpoint_id);
}

async function checkpointIds(saver: BaseCheckpointSaver, threadId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const tuple of saver.list(configOf(threadId))) ids.push(tuple.checkpoint.id);
  return ids;
}

/** The checkpoint a resume would start from. */
async function tipOf(saver: BaseCheckpointSaver, threadId: string): Promise<string | undefined> {
  return (await saver.getTuple(configOf(threadId)))?.checkpoint.id;
}

async function pendingWrites(
  saver: BaseCheckpointSaver,
  threadId: string,
  checkpointId: string,
): Promise<[string, string, unknown][]> {
  const tuple = await saver.getTuple(configOf(threadId, checkpointId));
  return tuple?.pendingWrites ?? [];
}

function hasMarker(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { isStaleWriteOwnerError?: unknown }).isStaleWriteOwnerError === true
  );
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * Runs a superseded writer's write and requires that the writer learns it lost: the write throws
 * the marked refusal, or it returns and the writer's `checkWriteOwnership()` barrier throws it.
 */
async function expectRefused(
  writer: WriteOwnershipWriter,
  write: () => Promise<unknown>,
  what: string,
): Promise<void> {
  try {
    await write();
  } catch (error) {
    check(
      hasMarker(error),
      () =>
        `${what} by a superseded writer threw ${describeError(error)}, which carries no isStaleWriteOwnerError: true marker`,
    );
    return;
  }
  const barrier = writer.checkWriteOwnership?.bind(writer);
  check(
    barrier !== undefined,
    () =>
      `${what} by a superseded writer returned normally and the writer has no checkWriteOwnership() barrier: the writer cannot learn that it lost the thread`,
  );
  try {
    await barrier!();
  } catch (error) {
    check(
      hasMarker(error),
      () =>
        `checkWriteOwnership() after ${what} threw ${describeError(error)}, which carries no isStaleWriteOwnerError: true marker`,
    );
    return;
  }
  throw new WriteOwnershipViolation(
    `${what} by a superseded writer was refused silently: the write returned and checkWriteOwnership() reported ownership intact`,
  );
}

/** Claims the thread twice: the first writer, superseded, and its first checkpoint's id. */
async function supersededWriter(saver: WriteOwnershipCheckpointer, threadId: string) {
  const stale = await saver.claimWriteOwnership(threadId);
  const first = await putCheckpoint(stale, threadId, 0);
  const current = await saver.claimWriteOwnership(threadId);
  return { stale, current, first };
}

/**
 * A superseded writer's pending write under a task id nobody used (so no first-writer-wins rule
 * can be what keeps it out), which must be refused; answers the values then stored there.
 */
async function refusedPendingWrite(saver: WriteOwnershipCheckpointer) {
  const threadId = newThread();
  const { stale, first } = await supersededWriter(saver, threadId);
  const config = configOf(threadId, first);
  await expectRefused(
    stale,
    () => stale.putWrites(config, [['ch', 'stale']], orderedId()),
    'putWrites',
  );
  const values = (await pendingWrites(saver, threadId, first)).map((write) => write[2]);
  return { values, at: first };
}

/**
 * The collision itself: both writers ran the same task at the same checkpoint, so their task ids
 * are equal. The current owner writes `channel` first, the superseded writer's write must be
 * refused; answers the values then stored on `channel`.
 */
async function sameTaskCollision(
  saver: WriteOwnershipCheckpointer,
  channel: string,
): Promise<unknown[]> {
  const threadId = newThread();
  const { stale, current, first } = await supersededWriter(saver, threadId);
  const taskId = orderedId();
  const write = (writer: WriteOwnershipWriter, value: string) =>
    writer.putWrites(configOf(threadId, first), [[channel, value]], taskId);
  await write(current, 'current');
  await expectRefused(
    stale,
    () => write(stale, 'stale'),
    `putWrites of the same task on ${channel}`,
  );
  return (await pendingWrites(saver, threadId, first))
    .filter((pending) => pending[1] === channel)
    .map((pending) => pending[2]);
}

export const WRITE_OWNERSHIP_CLAUSES = {
  async claim_returns_a_writer(saver) {
    const writer = (await saver.claimWriteOwnership(newThread())) as unknown;
    check(
      typeof writer === 'object' && writer !== null,
      () => `claimWriteOwnership answered ${String(writer)}`,
    );
    for (const method of ['put', 'putWrites'] as const) {
      check(
        typeof (writer as Record<string, unknown>)[method] === 'function',
        () => `the claimed writer has no ${method} method`,
      );
    }
  },

  async current_owner_can_put(saver) {
    const threadId = newThread();
    const owner = await saver.claimWriteOwnership(threadId);
    const id = await putCheckpoint(owner, threadId, 0);
    const tip = await tipOf(saver, threadId);
    check(tip === id, () => `the owner's checkpoint ${id} is not the tip (${tip})`);
  },

  async current_owner_can_put_writes(saver) {
    const threadId = newThread();
    const owner = await saver.claimWriteOwnership(threadId);
    const id = await putCheckpoint(owner, threadId, 0);
    await owner.putWrites(configOf(threadId, id), [['ch', 'owned']], orderedId());
    const values = (await pendingWrites(saver, threadId, id)).map((write) => write[2]);
    check(
      values.length === 1 && values[0] === 'owned',
      () => `expected the owner's one pending write, found ${JSON.stringify(values)}`,
    );
  },

  async superseded_owner_put_is_rejected(saver) {
    const threadId = newThread();
    const { stale } = await supersededWriter(saver, threadId);
    await expectRefused(stale, () => putCheckpoint(stale, threadId, 1), 'put');
  },

  async superseded_owner_put_is_not_durable(saver) {
    const threadId = newThread();
    const { stale, first } = await supersededWriter(saver, threadId);
    await expectRefused(stale, () => putCheckpoint(stale, threadId, 1), 'put');
    const ids = await checkpointIds(saver, threadId);
    check(
      ids.length === 1 && ids[0] === first,
      () => `a superseded writer's put was stored: the thread holds ${JSON.stringify(ids)}`,
    );
  },

  async superseded_owner_cannot_fork_the_chain(saver) {
    const threadId = newThread();
    const a = await saver.claimWriteOwnership(threadId);
    const c1 = await putCheckpoint(a, threadId, 0);
    const b = await saver.claimWriteOwnership(threadId);
    const c2 = await putCheckpoint(b, threadId, 1, c1);
    check((await tipOf(saver, threadId)) === c2, () => `the new owner's ${c2} is not the tip`);
    // A still believes c1 is the tip, as a worker waking from a pause does.
    await expectRefused(a, () => putCheckpoint(a, threadId, 1, c1), 'a forking put');
    const tip = await tipOf(saver, threadId);
    check(tip === c2, () => `the chain forked: the tip is ${tip}, not the current owner's ${c2}`);
    const ids = (await checkpointIds(saver, threadId)).sort();
    check(
      JSON.stringify(ids) === JSON.stringify([c1, c2].sort()),
      () => `the thread should hold exactly ${c1} and ${c2}, it holds ${JSON.stringify(ids)}`,
    );
  },

  async superseded_owner_put_writes_is_rejected(saver) {
    await refusedPendingWrite(saver);
  },

  async superseded_owner_put_writes_is_not_durable(saver) {
    const { values, at } = await refusedPendingWrite(saver);
    check(
      !values.includes('stale'),
      () => `a superseded writer's pending write was stored at ${at}`,
    );
  },

  async superseded_owner_cannot_displace_the_current_owners_write(saver) {
    const values = await sameTaskCollision(saver, 'ch');
    check(
      JSON.stringify(values) === JSON.stringify(['current']),
      () => `expected only the current owner's value, found ${JSON.stringify(values)}`,
    );
  },

  async superseded_owner_cannot_displace_a_special_channel_write(saver) {
    // A special channel's write replaces its slot; __resume__ holds a human's answer.
    const values = await sameTaskCollision(saver, '__resume__');
    check(
      JSON.stringify(values) === JSON.stringify(['current']),
      () => `a superseded writer replaced __resume__: found ${JSON.stringify(values)}`,
    );
  },

  async superseded_owner_stays_superseded(saver) {
    const threadId = newThread();
    const { stale, first } = await supersededWriter(saver, threadId);
    await expectRefused(stale, () => putCheckpoint(stale, threadId, 1), 'put');
    await expectRefused(stale, () => putCheckpoint(stale, threadId, 2), 'a second put');
    const ids = await checkpointIds(saver, threadId);
    check(
      ids.length === 1 && ids[0] === first,
      () => `a writer refused twice still changed the thread: ${JSON.stringify(ids)}`,
    );
  },

  async ownership_is_per_thread(saver) {
    const one = newThread();
    const two = newThread();
    const owner = await saver.claimWriteOwnership(one);
    await saver.claimWriteOwnership(two);
    const id = await putCheckpoint(owner, one, 1);
    check(
      (await tipOf(saver, one)) === id,
      () => `claiming thread ${two} superseded the owner of thread ${one}`,
    );
  },

  async new_owner_can_write_after_superseding(saver) {
    const threadId = newThread();
    const old = await saver.claimWriteOwnership(threadId);
    const c1 = await putCheckpoint(old, threadId, 0);
    const fresh = await saver.claimWriteOwnership(threadId);
    const c2 = await putCheckpoint(fresh, threadId, 1, c1);
    await fresh.putWrites(configOf(threadId, c2), [['ch', 'recovered']], orderedId());
    check((await tipOf(saver, threadId)) === c2, () => `the new owner's ${c2} is not the tip`);
    const values = (await pendingWrites(saver, threadId, c2)).map((write) => write[2]);
    check(
      JSON.stringify(values) === JSON.stringify(['recovered']),
      () => `the new owner's pending write is missing: ${JSON.stringify(values)}`,
    );
  },

  async duplicate_put_writes_from_current_owner_is_not_a_rejection(saver) {
    const threadId = newThread();
    const owner = await saver.claimWriteOwnership(threadId);
    const id = await putCheckpoint(owner, threadId, 0);
    const taskId = orderedId();
    await owner.putWrites(configOf(threadId, id), [['ch', 'v']], taskId);
    try {
      await owner.putWrites(configOf(threadId, id), [['ch', 'v']], taskId);
      await owner.checkWriteOwnership?.();
    } catch (error) {
      check(
        !hasMarker(error),
        () =>
          'the current owner repeating its own write was refused as a superseded writer; a repeat must be absorbed',
      );
      throw error;
    }
  },

  async reads_do_not_require_ownership(saver) {
    const threadId = newThread();
    const owner = await saver.claimWriteOwnership(threadId);
    const id = await putCheckpoint(owner, threadId, 0);
    const tuple = await saver.getTuple(configOf(threadId));
    check(tuple?.checkpoint.id === id, () => `a reader did not get the owner's checkpoint ${id}`);
    const ids = await checkpointIds(saver, threadId);
    check(
      JSON.stringify(ids) === JSON.stringify([id]),
      () => `a reader's list shows ${JSON.stringify(ids)}, not [${id}]`,
    );
  },
} satisfies Record<string, Clause>;

export type WriteOwnershipClause = keyof typeof WRITE_OWNERSHIP_CLAUSES;
