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

/** runThread's options with a graph per policy version instead of one graph. */
export interface RunThreadByVersionOptions<Input, Output> extends RunThreadOptions<Input> {
  /**
   * The graph of each policy version (`{ v7: graphV7, v8: graphV8 }`): the run acquires the thread
   * naming these versions and invokes the graph of the version the grant says the thread runs.
   * The first version pins a thread new to the store outside any rollout.
   */
  graphs: Record<string, ThreadGraph<Input, Output>>;
}

const DEFAULT_TTL_MS = 30_000;
const DEFAULT_POLL_MS = 100;

/** A run of `graph` on the thread; its saver's `policyVersion`, if any, is the run's policy. */
export function runThread<Input, Output>(
  graph: ThreadGraph<Input, Output>,
  options: RunThreadOptions<Input>,
): Promise<Output>;
/** A run of the graph of the thread's policy version. */
export function runThread<Input, Output>(
  options: RunThreadByVersionOptions<Input, Output>,
): Promise<Output>;
export async function runThread<Input, Output>(
  graphOrOptions: ThreadGraph<Input, Output> | RunThreadByVersionOptions<Input, Output>,
  maybeOptions?: RunThreadOptions<Input>,
): Promise<Output> {
  const { options, graphs, firstGraph } = graphsOfRun(graphOrOptions, maybeOptions);
  const versions = graphs === null ? null : { graphs };
  const saver = fencedSaverOf(firstGraph);
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
    ...(versions === null
      ? saverPolicy(saver)
      : { policyVersions: versions.graphs.map(([version]) => version) }),
  };
  for (const [version, graph] of versions?.graphs ?? []) {
    if (fencedSaverOf(graph).scopeFor(threadId) !== request.scope) {
      throw new FencegateError(
        'invalid_request',
        `the graphs by version must keep a thread in one scope; the saver of ${version} names another (give every saver the same scopePrefix)`,
        { field: `graphs.${version}` },
      );
    }
  }
  const { gate } = options;
  const lease = await claimThread(gate, request, strategy, {
    threadId,
    pollMs,
    signal: options.signal,
  });
  const stopRenewing = keepRenewed(lease, request.ttlMs);
  let marker: MarkerState | null = null;
  try {
    const graph = versions === null ? firstGraph : graphOfGrant(versions.graphs, lease, threadId);
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

interface GraphsOfRun<Input, Output> {
  /** The graphs by version, in the order given; null for one graph. */
  graphs: [string, ThreadGraph<Input, Output>][] | null;
  /** The one graph, or the first by version: its saver names the thread's scope. */
  firstGraph: ThreadGraph<Input, Output>;
  options: RunThreadOptions<Input>;
}

/** runThread's arguments in either form: `(graph, options)` or `({ graphs, ...options })`. */
function graphsOfRun<Input, Output>(
  graphOrOptions: ThreadGraph<Input, Output> | RunThreadByVersionOptions<Input, Output>,
  options: RunThreadOptions<Input> | undefined,
): GraphsOfRun<Input, Output> {
  if (options !== undefined) {
    if ('graphs' in options) {
      throw new FencegateError(
        'invalid_request',
        'give runThread one graph and its options, or only options with graphs by version',
        { field: 'graphs' },
      );
    }
    return { graphs: null, firstGraph: graphOrOptions as ThreadGraph<Input, Output>, options };
  }
  const { graphs: byVersion, ...rest } = graphOrOptions as RunThreadByVersionOptions<Input, Output>;
  const graphs =
    typeof byVersion === 'object' && byVersion !== null ? Object.entries(byVersion) : [];
  const first = graphs[0];
  if (first === undefined) {
    throw new FencegateError(
      'invalid_request',
      'runThread({ graphs }) needs a graph per policy version, e.g. { v7: graphV7, v8: graphV8 }',
      { field: 'graphs' },
    );
  }
  return { graphs, firstGraph: first[1], options: rest };
}

/** A single graph's policy: its saver's version, if the saver names one. */
function saverPolicy(saver: FencedCheckpointSaver): { policyVersion?: string } {
  return saver.policyVersion === undefined ? {} : { policyVersion: saver.policyVersion };
}

/**
 * The graph of the version the grant says the thread runs. A takeover (interrupt, rollback) keeps
 * the thread's version, which may be one this run has no graph for: nothing is written then.
 */
function graphOfGrant<Input, Output>(
  graphs: [string, ThreadGraph<Input, Output>][],
  lease: HeldLease,
  threadId: string,
): ThreadGraph<Input, Output> {
  const version = lease.grant.policyVersion;
  const found = graphs.find(([known]) => known === version);
  if (found !== undefined) return found[1];
  throw new FencegateError(
    'policy_mismatch',
    `thread ${threadId} runs policy ${version ?? 'none'}; this run has graphs for ${graphs.map(([known]) => known).join(', ')}`,
    { currentPolicyVersion: version },
  );
}
