/**
 * Completions of concurrently delivered intents recorded together: while one store call is
 * recording a batch, the outcomes that arrive queue up and go in the next call, so a dispatcher
 * costs the store one write per batch of outcomes rather than one per intent. Each completion
 * still gets its own answer (its intent or its refusal).
 */
import { GroupCommitter } from '../store/group-commit.js';
import type {
  CompleteIntentRequest,
  Intent,
  IntentCompletion,
  IntentCompletionResult,
} from '../types.js';

/** How a dispatcher records one completion. */
export type RecordCompletion = (
  effectKey: string,
  request: CompleteIntentRequest,
) => Promise<Intent>;

/** An API that records many completions in one call (a Fencegate handle). */
export interface BatchCompletionApi {
  completeIntents(completions: readonly IntentCompletion[]): Promise<IntentCompletionResult[]>;
}

/** Batches completions through `api.completeIntents`; `maxBatch` completions per call at most. */
export function batchedCompletion(api: BatchCompletionApi, maxBatch: number): RecordCompletion {
  const batches = new GroupCommitter<IntentCompletion, Intent>(
    async (completions) =>
      (await api.completeIntents(completions)).map((result) =>
        result.ok ? { ok: true, value: result.intent } : { ok: false, error: result.error },
      ),
    maxBatch,
  );
  return (effectKey, request) => batches.submit({ effectKey, ...request });
}
