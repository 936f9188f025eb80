/**
 * runThread: one run of a graph on a thread, fenced, with what to do when another run holds the
 * thread (LangGraph's `multitaskStrategy`):
 *
 * - `reject`    refused at once with ThreadBusyError; nothing started.
 * - `enqueue`   waits its turn, in arrival order across processes (thread-tickets.ts).
 * - `interrupt` takes the thread over: the running run's next checkpoint write is refused, its
 *               signal aborts at its next renewal; this run continues from its last checkpoint.
 * - `rollback`  as interrupt, and the interrupted run is undone first (thread-rollback.ts): its
 *               checkpoints and writes removed, its pending intents cancelled, and what it already
 *               caused reported to `onRollback` (rollback-intents.ts).
 *
 * The run holds the thread's lease for its whole length, renewed every third of `ttlMs`, and every
 * checkpoint is written under its fence; its marker (run-marker.ts) says where it started.
 */
import { randomUUID } from 'node:crypto';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { FencegateApi } from '../../api.js';
import { FencegateError, isFencegateError } from '../../errors.js';
import type { HeldLease, LeaseRequest } from '../lease-keeper.js';
import { fitName } from '../name-escape.js';
import { FencedCheckpointSaver } from './checkpoint-saver.js';
import { keepRenewed } from './lease-renewal.js';
import { claimThread, MULTITASK_STRATEGIES, type MultitaskStrategy } from './thread-claim.js';
import { markRunEnded, markRunStarted, readRunMarker, type MarkerState } from './run-marker.js';
import { asStaleWriteOwner } from './stale-write-owner-error.js';
import { settleRolledBackIntents, type RollbackReport } from './rollback-intents.js';
import { rollBackRun } from './thread-rollback.js';

export { MULTITASK_STRATEGIES, type MultitaskStrategy };
export { ThreadBusyError, isThreadBusyError } from './thread-busy-error.js';
export type { RollbackReport } from './rollback-intents.js';

/** What runThread needs of a compiled graph: LangGraph's invoke and its checkpointer. */
export interface ThreadGraph<Input, Output> {
  checkpointer?: BaseCheckpointSaver | boolean | undefined;
  invoke(input: Input, config?: RunThreadConfig): Promise<Output>;
}

/** LangGraph's run config: `configurable.thread_id` and `signal` are runThread's to set. */
export type RunThreadConfig = RunnableConfig & { durability?: 'exit' | 'async' | 'sync' };

export interface RunThreadOptions<Input> {
  /** The gate of the graph's FencedCheckpointSaver; over HTTP a worker token (see docs). */
  gate: FencegateApi;
  threadId: string;
  /** The graph's input; null (or a Command) continues the thread's last checkpoint. */
  input: Input;
  config?: RunThreadConfig;
  /** What to do when another run holds the thread. Default `reject`. */
  multitaskStrategy?: MultitaskStrategy;
  /**
   * Names the worker: the run holds the thread as `<holder>/<runId>`, a holder of its own, so two
   * runs of one worker never share a lease. Default `run-<runId>`.
   */
  holder?: string;
  /** The run's lease, renewed every third of it. Default 30 s. */
  ttlMs?: number;
  /** How often an `enqueue` waiter looks at the line. Default 100 ms. */
  pollMs?: number;
  /** Stops a waiting `enqueue` run, or the run itself. */
  signal?: AbortSignal;
  /**
   * Under `rollback`, told what became of the undone run before this run starts: its pending
   * intents cancelled, and those already delivered or in flight (which cannot be called back).
   */
  onRollback?: (report: RollbackReport) => void;
}

const DEFAULT_TTL_MS = 30_000;
const DEFAULT_POLL_MS = 100;

export async function runThread<Input, Output>(
  graph: ThreadGraph<Input, Output>,
  options: RunThreadOptions<Input>,
): Promise<Output> {
  const saver = fencedSaverOf(graph);
  const strategy = options.multitaskStrategy ?? 'reject';
  if (!MULTITASK_STRATEGIES.includes(strategy)) {
    throw new FencegateError(
      'invalid_request',
      `multitaskStrategy must be one of ${MULTITASK_STRATEGIES.join(', ')}`,
      { field: 'multitaskStrategy' },
    );
  }
  const threadId = requireThreadId(options.threadId);
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  if (!Number.isFinite(pollMs) || pollMs < 1) {
    throw new FencegateError('invalid_request', 'pollMs must be a number of milliseconds ≥ 1', {
      field: 'pollMs',
    });
  }
  const runId = randomUUID();
  const request: LeaseRequest = {
    scope: saver.scopeFor(threadId),
    holder: runHolder(options.holder, runId),
    ttlMs: options.ttlMs ?? DEFAULT_TTL_MS,
  };
  const { gate } = options;
  const lease = await claimThread(gate, request, strategy, {
    threadId,
    pollMs,
    signal: options.signal,
  });
  const stopRenewing = keepRenewed(lease, request.ttlMs);
  let marker: MarkerState | null = null;
  try {
    const previous = await readRunMarker(gate, request.scope);
    const interrupted = previous.marker;
    const unfinished = interrupted !== null && !interrupted.ended;
    if (strategy === 'rollback' && unfinished && interrupted.fence < lease.fence) {
      const target = { gate, saver, threadId, scope: request.scope, fence: lease.fence };
      // Effects first: a refusal here leaves the old run's records as they were.
      const effects = await settleRolledBackIntents({
        ...target,
        holder: request.holder,
        rolledBackFence: interrupted.fence,
      });
      const removedRecords = await rollBackRun(target, interrupted);
      options.onRollback?.({ runId: interrupted.runId, removedRecords, ...effects });
    }
    marker = await markRunStarted(
      gate,
      request.scope,
      { runId, holder: request.holder, fence: lease.fence },
      previous,
    );
    const result = await graph.invoke(options.input, runConfig(options, threadId, lease));
    await endRun(gate, request.scope, lease, marker);
    return result;
  } catch (error) {
    await endRun(gate, request.scope, lease, marker);
    throw asStaleWriteOwner(threadId, lostAuthority(lease) ?? error);
  } finally {
    stopRenewing();
  }
}

/**
 * The run's own holder. A given holder names the worker, not the run: were it the run's holder, a
 * second run of the worker would be answered the first run's live grant, and whatever its strategy
 * both would write the thread under one fence.
 */
function runHolder(worker: string | undefined, runId: string): string {
  return worker === undefined ? `run-${runId}` : fitName(`${worker}/${runId}`);
}

function runConfig<Input>(
  options: RunThreadOptions<Input>,
  threadId: string,
  lease: HeldLease,
): RunThreadConfig {
  const signals = [lease.signal, options.signal, options.config?.signal];
  return {
    ...options.config,
    configurable: { ...options.config?.configurable, thread_id: threadId, fence: lease.fence },
    signal: AbortSignal.any(signals.filter((signal) => signal !== undefined)),
  };
}

/**
 * Marks the run ended and releases the thread, so the next run need not wait out the lease. A run
 * that lost the thread has nothing to end: its successor holds it. A refusal or an unreachable
 * store leaves the lease to run out on its own.
 */
async function endRun(
  gate: FencegateApi,
  scope: string,
  lease: HeldLease,
  marker: MarkerState | null,
): Promise<void> {
  if (lease.lost) return;
  lease.released();
  try {
    if (marker?.marker) await markRunEnded(gate, scope, { ...marker, marker: marker.marker });
    else await gate.release({ scope, holder: lease.grant.holder, fence: lease.fence });
  } catch {
    // The lease lapses by itself; the run's own outcome is what the caller must see.
  }
}

/**
 * The store's word on a run that lost its thread, rather than LangGraph's abort error; thrown as
 * StaleWriteOwnerError, as the saver throws a refused write, whichever of the two came first.
 */
function lostAuthority(lease: HeldLease): FencegateError | undefined {
  const reason: unknown = lease.signal.reason;
  if (!lease.signal.aborted || !isFencegateError(reason)) return undefined;
  return reason.code === 'authority_revoked' ? undefined : reason;
}

function fencedSaverOf(graph: ThreadGraph<unknown, unknown>): FencedCheckpointSaver {
  if (graph.checkpointer instanceof FencedCheckpointSaver) return graph.checkpointer;
  throw new FencegateError(
    'invalid_request',
    'runThread needs a graph compiled with a FencedCheckpointSaver: builder.compile({ checkpointer: new FencedCheckpointSaver({ gate }) })',
    { field: 'graph.checkpointer' },
  );
}

function requireThreadId(value: unknown): string {
  if (typeof value === 'string' && value.length > 0) return value;
  throw new FencegateError('invalid_request', 'threadId must be a non-empty string', {
    field: 'threadId',
  });
}
