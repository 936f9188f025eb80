/**
 * The effects nodes staged and no commit has taken yet, per thread scope, writer and task. A node
 * stages an effect while it runs; the saver commits it as an intent with the writes LangGraph
 * stores when the task ends (`putWrites`), or, when a run stores no per-task writes (durability
 * `exit`), with the first checkpoint written after the step the task ran in. A task that ends in
 * an error or an interrupt drops what it staged: its next attempt stages it again under the same
 * task id, so the same effect key.
 *
 * The writer is the fence a run brings (`configurable.fence`), or the saver's own lease: a
 * superseded run's effects are never handed to its successor's commit, and are forgotten with its
 * refused write.
 */
import type { IntentRequest } from '../../types.js';

/** One task's staged effects, and the checkpoint its step ran from. */
interface TaskEffects {
  origin: string;
  effects: Map<string, IntentRequest>;
}

/** Who writes: a run's own fence, or 'lease' for a run that writes under the saver's lease. */
export type WriterKey = number | 'lease';

export class StagedEffects {
  /** scope → writer → task id → effects. */
  readonly #byScope = new Map<string, Map<WriterKey, Map<string, TaskEffects>>>();

  /** Keeps the effect; false (nothing kept) when it would be the task's `max + 1`th. */
  stage(
    scope: string,
    writer: WriterKey,
    taskId: string,
    origin: string,
    effect: IntentRequest,
    max: number,
  ): boolean {
    const tasks = this.#tasks(scope, writer, true);
    let task = tasks.get(taskId);
    if (task === undefined || task.origin !== origin) {
      task = { origin, effects: new Map() };
      tasks.set(taskId, task);
    }
    // A retried attempt of the task stages the same key again: the latest payload stands.
    if (!task.effects.has(effect.effectKey) && task.effects.size >= max) return false;
    task.effects.set(effect.effectKey, effect);
    return true;
  }

  /** Takes what a task staged (for its writes' commit, or to drop it). */
  takeTask(scope: string, writer: WriterKey, taskId: string): IntentRequest[] {
    const tasks = this.#tasks(scope, writer, false);
    const task = tasks?.get(taskId);
    if (tasks === undefined || task === undefined) return [];
    tasks.delete(taskId);
    this.#prune(scope, writer);
    return [...task.effects.values()];
  }

  /**
   * Takes the effects of tasks whose step ran from a checkpoint older than `checkpointId` (ids are
   * uuid6: name order is time order). Those tasks finished before this checkpoint was made, yet no
   * writes of theirs were stored: the run keeps none per task, so the checkpoint carries them.
   */
  takeOlderThan(scope: string, writer: WriterKey, checkpointId: string): IntentRequest[] {
    const tasks = this.#tasks(scope, writer, false);
    if (tasks === undefined) return [];
    const taken: IntentRequest[] = [];
    for (const [taskId, task] of tasks) {
      if (task.origin >= checkpointId) continue;
      taken.push(...task.effects.values());
      tasks.delete(taskId);
    }
    this.#prune(scope, writer);
    return taken;
  }

  /** Forgets every effect a writer staged on a thread (its write was refused: it was superseded). */
  dropWriter(scope: string, writer: WriterKey): void {
    this.#byScope.get(scope)?.delete(writer);
    this.#prune(scope, writer);
  }

  #tasks(scope: string, writer: WriterKey, create: true): Map<string, TaskEffects>;
  #tasks(scope: string, writer: WriterKey, create: false): Map<string, TaskEffects> | undefined;
  #tasks(scope: string, writer: WriterKey, create: boolean) {
    let writers = this.#byScope.get(scope);
    if (writers === undefined) {
      if (!create) return undefined;
      writers = new Map();
      this.#byScope.set(scope, writers);
    }
    let tasks = writers.get(writer);
    if (tasks === undefined && create) {
      tasks = new Map();
      writers.set(writer, tasks);
    }
    return tasks;
  }

  #prune(scope: string, writer: WriterKey): void {
    const writers = this.#byScope.get(scope);
    if (writers === undefined) return;
    if (writers.get(writer)?.size === 0) writers.delete(writer);
    if (writers.size === 0) this.#byScope.delete(scope);
  }
}
