/**
 * A running dispatcher's store writes through an API that records completions and a claim in one
 * call (a Fencegate handle): outcomes queue until the event loop turns, then go to the store in one
 * call, with the dispatcher's next claim when it wants one by then. The deliveries that end
 * together and the batch that replaces them cost one transaction, not one each. Each completion
 * and the claim still get their own answer.
 */
import type {
  ClaimIntentsRequest,
  CompleteAndClaimResult,
  Intent,
  IntentCompletion,
} from '../types.js';
import type { BatchCompletionApi } from './completion-batch.js';

/** An API that records completions and a claim in one call (a Fencegate handle). */
export interface CompleteAndClaimApi extends BatchCompletionApi {
  completeAndClaim(
    completions: readonly IntentCompletion[],
    claim: ClaimIntentsRequest,
  ): Promise<CompleteAndClaimResult>;
}

interface Waiter<T> {
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

interface QueuedCompletion extends Waiter<Intent> {
  completion: IntentCompletion;
}

interface WantedClaim extends Waiter<Intent[]> {
  /** Asked when the claim is sent: the room for deliveries is known only then. */
  request: () => ClaimIntentsRequest;
}

export class CompletionsWithClaims {
  readonly #api: CompleteAndClaimApi;
  readonly #maxBatch: number;
  #queue: QueuedCompletion[] = [];
  #claim: WantedClaim | null = null;
  #scheduled = false;

  /** At most `maxBatch` completions go in one call. */
  constructor(api: CompleteAndClaimApi, maxBatch: number) {
    this.#api = api;
    this.#maxBatch = maxBatch;
  }

  /** Records one completion: with the next claim, or alone when the event loop turns. */
  complete(effectKey: string, request: Omit<IntentCompletion, 'effectKey'>): Promise<Intent> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ completion: { effectKey, ...request }, resolve, reject });
      this.#schedule();
    });
  }

  /** Claims when the event loop turns, with the completions queued by then. */
  claim(request: () => ClaimIntentsRequest): Promise<Intent[]> {
    return new Promise((resolve, reject) => {
      if (this.#claim !== null) {
        reject(new Error('a claim is already waiting'));
        return;
      }
      this.#claim = { request, resolve, reject };
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    // setImmediate, not a microtask: every delivery that ended in this turn queues first.
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#scheduled = false;
    const claim = this.#claim;
    this.#claim = null;
    const batch = this.#queue.splice(0, this.#maxBatch);
    if (this.#queue.length > 0) this.#schedule();
    if (claim === null) {
      void this.#completeAlone(batch);
      return;
    }
    let request: ClaimIntentsRequest;
    try {
      request = claim.request();
    } catch (error) {
      claim.reject(error);
      void this.#completeAlone(batch);
      return;
    }
    void this.#completeAndClaim(batch, claim, request);
  }

  async #completeAlone(batch: QueuedCompletion[]): Promise<void> {
    if (batch.length === 0) return;
    try {
      const results = await this.#api.completeIntents(batch.map((queued) => queued.completion));
      batch.forEach((queued, i) => settle(queued, results[i]));
    } catch (error) {
      for (const queued of batch) queued.reject(error);
    }
  }

  async #completeAndClaim(
    batch: QueuedCompletion[],
    claim: WantedClaim,
    request: ClaimIntentsRequest,
  ): Promise<void> {
    let result: CompleteAndClaimResult;
    try {
      result = await this.#api.completeAndClaim(
        batch.map((queued) => queued.completion),
        request,
      );
    } catch (error) {
      for (const queued of batch) queued.reject(error);
      claim.reject(error);
      return;
    }
    batch.forEach((queued, i) => settle(queued, result.completions[i]));
    if (result.claim.ok) claim.resolve(result.claim.intents);
    else claim.reject(result.claim.error);
  }
}

function settle(
  queued: QueuedCompletion,
  result: CompleteAndClaimResult['completions'][number] | undefined,
): void {
  if (result === undefined) queued.reject(new Error('a completion went unanswered'));
  else if (result.ok) queued.resolve(result.intent);
  else queued.reject(result.error);
}
