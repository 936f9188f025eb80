/**
 * Node effects: an external effect a LangGraph node (or a tool it calls) must cause once, staged
 * inside the node and committed as an intent with that task's writes under the thread's fence,
 * then delivered by the fenced dispatcher under a key that names the task:
 *
 *   effect key = digest(thread scope, checkpoint namespace, task id, the node's own key)
 *
 * LangGraph derives a task id from the checkpoint its step ran from, so the task run again after a
 * crash, or resumed from that checkpoint, stages the same key, and a key that exists already is
 * absorbed rather than delivered twice. The saver does the committing (checkpoint-saver.ts); this
 * file is what a node calls.
 */
import { createHash } from 'node:crypto';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { FencegateApi } from '../../api.js';
import { canonicalJson } from '../../core/canonical.js';
import { DEFAULT_LIMITS, TARGET_PATTERN, TARGET_RULE } from '../../core/limits.js';
import { FencegateError } from '../../errors.js';
import type { IntentRequest, IntentStatus } from '../../types.js';

/** LangGraph puts the running task's checkpointer and id into each node's config under these. */
const CHECKPOINTER_KEY = '__pregel_checkpointer';
const TASK_ID_KEY = '__pregel_task_id';
const CHECKPOINT_MAP_KEY = 'checkpoint_map';
/** A key names one effect of one task; its digest, not the text, goes into the effect key. */
const MAX_KEY_LENGTH = 1024;
const POLL_MS = 25;

/** What a checkpointer offers nodes to stage effects with (FencedCheckpointSaver, its writers). */
export interface NodeEffectStager {
  stageNodeEffect(config: RunnableConfig, effect: StagedNodeEffect): string;
  /** The gate whose dispatcher delivers the effects. */
  readonly effectGate: FencegateApi;
}

/** One effect as a node staged it, with where it comes from. */
export interface StagedNodeEffect {
  threadId: string;
  taskId: string;
  /** The task's checkpoint namespace, as the node's config names it. */
  namespace: string;
  /** The checkpoint the task's step ran from. */
  origin: string;
  key: string;
  target: string;
  payload: unknown;
}

/**
 * Stages an effect of the running node: it is committed with the task's writes (or, under
 * durability `exit`, with the run's checkpoint), dropped when the task ends in an error or an
 * interrupt, refused with the writes of a run that was superseded. Answers the effect key, which
 * `awaitEffect` reads the outcome by. Call it inside a node or tool, with the node's config.
 */
export function stageEffect(
  config: RunnableConfig,
  key: string,
  target: string,
  payload: unknown,
): string {
  const stager = stagerOf(config, 'stageEffect');
  return stager.stageNodeEffect(config, nodeEffect(config, key, target, payload));
}

/** An effect's delivery as a later node sees it. */
export type EffectOutcome =
  | { effectKey: string; status: 'delivered'; providerRef: string | null }
  | {
      effectKey: string;
      status: 'failed' | 'needs_attention' | 'cancelled';
      error: string | null;
    }
  /** Not committed yet, or committed and not yet answered by its target. */
  | { effectKey: string; status: 'pending' };

export interface AwaitEffectOptions {
  /** How long to wait for a final outcome before answering 'pending'. Default 0: read once. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * The delivery outcome of an effect a node staged (`effectKey` as stageEffect answered it): the
 * provider's reference once delivered, the error once it ended otherwise, else 'pending' when
 * `timeoutMs` passes first.
 */
export async function awaitEffect(
  config: RunnableConfig,
  effectKey: string,
  options: AwaitEffectOptions = {},
): Promise<EffectOutcome> {
  const gate = stagerOf(config, 'awaitEffect').effectGate;
  if (typeof effectKey !== 'string' || effectKey.length === 0) {
    throw new FencegateError(
      'invalid_request',
      'awaitEffect needs the effect key stageEffect answered',
      {
        field: 'effectKey',
      },
    );
  }
  const until = Date.now() + (options.timeoutMs ?? 0);
  for (;;) {
    const intent = await gate.getIntent(effectKey);
    const outcome = intent === null ? undefined : finalOutcome(effectKey, intent);
    if (outcome !== undefined) return outcome;
    if (Date.now() >= until || options.signal?.aborted === true) {
      return { effectKey, status: 'pending' };
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, until - Date.now())));
  }
}

/** The effect key of a node's effect: the same for every run of the same task. */
export function nodeEffectKey(scope: string, effect: StagedNodeEffect): string {
  const digest = createHash('sha256')
    .update(canonicalJson([scope, effect.namespace, effect.taskId, effect.key]))
    .digest('base64url')
    .slice(0, 43);
  return `lg-effect:${digest}`;
}

/** The intent a staged effect commits as. */
export function nodeIntent(scope: string, effect: StagedNodeEffect): IntentRequest {
  return {
    effectKey: nodeEffectKey(scope, effect),
    target: effect.target,
    payload: effect.payload,
  };
}

/** The most effects one task may stage: they commit together, in one commit. */
export const MAX_EFFECTS_PER_TASK = DEFAULT_LIMITS.maxIntents;

function finalOutcome(
  effectKey: string,
  intent: { status: IntentStatus; providerRef: string | null; lastError: string | null },
): EffectOutcome | undefined {
  switch (intent.status) {
    case 'delivered':
      return { effectKey, status: 'delivered', providerRef: intent.providerRef };
    case 'failed':
    case 'needs_attention':
    case 'cancelled':
      return { effectKey, status: intent.status, error: intent.lastError };
    default:
      return undefined;
  }
}

function nodeEffect(
  config: RunnableConfig,
  key: string,
  target: string,
  payload: unknown,
): StagedNodeEffect {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw refusal(
      'key',
      `must be a string of 1 to ${MAX_KEY_LENGTH} characters naming the effect within its node`,
    );
  }
  if (typeof target !== 'string' || !TARGET_PATTERN.test(target)) {
    throw refusal('target', `must be ${TARGET_RULE}, a target of the dispatcher's targets`);
  }
  if (payload === undefined || typeof payload === 'function' || typeof payload === 'symbol') {
    throw refusal('payload', 'must be a JSON value');
  }
  const configurable = config?.configurable ?? {};
  const taskId: unknown = configurable[TASK_ID_KEY];
  const namespace: unknown = configurable.checkpoint_ns ?? '';
  const threadId: unknown = configurable.thread_id;
  if (typeof taskId !== 'string' || typeof namespace !== 'string') {
    throw refusal('config', 'must be the config LangGraph passed to the running node or tool');
  }
  if (typeof threadId !== 'string' && typeof threadId !== 'number') {
    throw refusal('config', 'has no configurable.thread_id: run the graph on a thread');
  }
  const origins = (configurable[CHECKPOINT_MAP_KEY] ?? {}) as Record<string, unknown>;
  const origin = origins[parentNamespace(namespace)];
  if (typeof origin !== 'string') {
    throw refusal('config', "names no checkpoint its step ran from: pass the node's own config");
  }
  return { threadId: String(threadId), taskId, namespace, origin, key, target, payload };
}

/** A task's namespace is its graph's namespace and `<node>:<task id>`, joined by `|`. */
function parentNamespace(namespace: string): string {
  const cut = namespace.lastIndexOf('|');
  return cut < 0 ? '' : namespace.slice(0, cut);
}

function stagerOf(config: RunnableConfig, call: string): NodeEffectStager {
  const checkpointer: unknown = config?.configurable?.[CHECKPOINTER_KEY];
  const stager = checkpointer as Partial<NodeEffectStager> | undefined;
  if (typeof stager?.stageNodeEffect !== 'function' || stager.effectGate === undefined) {
    throw new FencegateError(
      'invalid_request',
      `${call} needs a graph compiled with a FencedCheckpointSaver (or a writer it answered), called inside a node or tool with that node's config`,
      { field: 'config' },
    );
  }
  return stager as NodeEffectStager;
}

function refusal(field: string, rule: string): FencegateError {
  return new FencegateError('invalid_request', `stageEffect: ${field} ${rule}`, { field });
}
