/**
 * What the node-effect tests share: a graph (plan → act → report) whose `act` stages the effect
 * `notify` for the target `crm` and whose `report` reads its outcome, a real HTTP receiver as that
 * target and the real dispatcher delivering to it. Deliveries are counted at the receiver.
 */
import { Annotation, END, START, StateGraph, interrupt } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { FencegateApi } from '../../src/api.js';
import { Dispatcher, effectorsFromTargets, parseTargets } from '../../src/dispatch/index.js';
import { awaitEffect, stageEffect } from '../../src/integrations/langgraph/index.js';
import type { PausePoints } from '../../src/testing/index.js';
import { Receiver } from '../dispatch/receiver.js';

const State = Annotation.Root({
  steps: Annotation<string[]>({ reducer: (done, next) => done.concat(next), default: () => [] }),
  effect: Annotation<string>(),
  outcome: Annotation<string>(),
});

export interface ActBehaviour {
  /** Pause point `<run>:act`, reached after staging. */
  points?: PausePoints;
  /** After the pause: stage `late` (a superseded run's second effect). */
  stageLate?: boolean;
  /** Fails after staging, while `failures.left` > 0. */
  failures?: { left: number };
  /** Calls interrupt() after staging. */
  askApproval?: boolean;
  /** After staging (and before `late`): the node's work, which another process may interrupt. */
  hold?: (effectKey: string) => Promise<void>;
  /** How long `report` waits for the outcome. Default 0: reads it once. */
  awaitMs?: number;
}

/** The effect keys each run of `act` staged, in the order staged. */
export type StagedKeys = string[];

export function buildEffectGraph(
  checkpointer: BaseCheckpointSaver,
  run: string,
  staged: StagedKeys,
  behaviour: ActBehaviour = {},
) {
  return new StateGraph(State)
    .addNode('plan', () => ({ steps: [`plan by ${run}`] }))
    .addNode('act', async (_state, config: RunnableConfig) => {
      const key = stageEffect(config, 'notify', 'crm', { run });
      staged.push(key);
      if (behaviour.askApproval === true) interrupt('approve the notification?');
      if (behaviour.failures !== undefined && behaviour.failures.left > 0) {
        behaviour.failures.left -= 1;
        throw new Error('act failed after staging');
      }
      if (behaviour.points !== undefined) await behaviour.points.reach(`${run}:act`);
      if (behaviour.hold !== undefined) await behaviour.hold(key);
      if (behaviour.stageLate === true) staged.push(stageEffect(config, 'late', 'crm', { run }));
      return { steps: [`act by ${run}`], effect: key };
    })
    .addNode('report', async (state, config: RunnableConfig) => {
      const outcome = await awaitEffect(config, state.effect, {
        timeoutMs: behaviour.awaitMs ?? 0,
      });
      const seen =
        outcome.status === 'delivered' ? `delivered ${outcome.providerRef}` : outcome.status;
      return { steps: [`report by ${run}`], outcome: seen };
    })
    .addEdge(START, 'plan')
    .addEdge('plan', 'act')
    .addEdge('act', 'report')
    .addEdge('report', END)
    .compile({ checkpointer });
}

/** The target `crm` (a real HTTP receiver) and a running dispatcher delivering to it. */
export class EffectTarget {
  readonly receiver: Receiver;
  readonly #dispatcher: Dispatcher;

  private constructor(receiver: Receiver, dispatcher: Dispatcher) {
    this.receiver = receiver;
    this.#dispatcher = dispatcher;
  }

  static async start(gate: FencegateApi): Promise<EffectTarget> {
    const receiver = await Receiver.start();
    const targets = parseTargets({
      targets: { crm: { type: 'webhook', url: receiver.url(), timeoutMs: 2000 } },
    });
    const dispatcher = new Dispatcher({
      api: gate as never,
      dispatcherId: 'effects-dispatcher',
      effectors: effectorsFromTargets(targets),
      pollIntervalMs: 10,
    });
    dispatcher.start();
    return new EffectTarget(receiver, dispatcher);
  }

  /** Requests the target received with this key: a delivery each, repeats included. */
  deliveries(effectKey: string): number {
    return this.receiver.requestsFor(effectKey).length;
  }

  async stop(): Promise<void> {
    await this.#dispatcher.stop();
    await this.receiver.close();
  }
}
