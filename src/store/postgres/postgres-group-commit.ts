/**
 * Group commit on PostgreSQL: while every pooled connection is busy, arriving commits queue; the
 * next free connection takes the whole queue (up to `maxBatch`) in one `commit_batch` call. Under
 * light load each commit still goes alone, so batching adds no latency; under load one transaction,
 * one WAL flush and one round trip serve many commits.
 *
 * A batch is one transaction, so it succeeds or fails as a whole: a lost connection answers every
 * commit in it outcome_unknown (each with its own operationId), and a batch that fails for a reason
 * other than the connection is split and its commits run alone, so one bad request cannot fail its
 * neighbours.
 */
import type { NormalizedCommit } from '../../core/validate.js';
import { FencegateError, isFencegateError } from '../../errors.js';
import type { CommitResult } from '../../types.js';
import { outcomeUnknown } from './postgres-errors.js';

export interface QueuedCommit {
  tenant: string;
  request: NormalizedCommit;
  resolve: (result: CommitResult) => void;
  reject: (error: unknown) => void;
}

export interface GroupCommitRunner {
  /** Runs one commit alone. */
  single(tenant: string, request: NormalizedCommit): Promise<CommitResult>;
  /** Runs several commits in one transaction; one settlement per item, in order. */
  batch(
    items: readonly { tenant: string; request: NormalizedCommit }[],
  ): Promise<(CommitResult | FencegateError)[]>;
}

export class PostgresGroupCommitter {
  readonly #runner: GroupCommitRunner;
  readonly #target: string;
  readonly #maxConcurrent: number;
  readonly #maxBatch: number;
  #queue: QueuedCommit[] = [];
  #running = 0;

  constructor(runner: GroupCommitRunner, target: string, maxConcurrent: number, maxBatch = 64) {
    this.#runner = runner;
    this.#target = target;
    this.#maxConcurrent = Math.max(1, maxConcurrent);
    this.#maxBatch = Math.max(1, maxBatch);
  }

  submit(tenant: string, request: NormalizedCommit): Promise<CommitResult> {
    return new Promise<CommitResult>((resolve, reject) => {
      this.#queue.push({ tenant, request, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#running < this.#maxConcurrent && this.#queue.length > 0) {
      const items = this.#queue.splice(0, this.#maxBatch);
      this.#running += 1;
      void this.#run(items).finally(() => {
        this.#running -= 1;
        this.#pump();
      });
    }
  }

  async #run(items: QueuedCommit[]): Promise<void> {
    if (items.length === 1) {
      const [item] = items as [QueuedCommit];
      await this.#runner.single(item.tenant, item.request).then(item.resolve, item.reject);
      return;
    }
    let answers: (CommitResult | FencegateError)[];
    try {
      answers = await this.#runner.batch(items);
    } catch (error) {
      if (isFencegateError(error) && error.code === 'outcome_unknown') {
        for (const item of items) {
          item.reject(outcomeUnknown(this.#target, error.cause, item.request.operationId));
        }
        return;
      }
      if (isFencegateError(error) && error.code === 'store_unavailable') {
        for (const item of items) item.reject(error);
        return;
      }
      // Something in the batch failed the transaction: run each commit alone.
      await Promise.all(
        items.map((item) =>
          this.#runner.single(item.tenant, item.request).then(item.resolve, item.reject),
        ),
      );
      return;
    }
    items.forEach((item, i) => {
      const answer = answers[i];
      if (answer instanceof FencegateError) item.reject(answer);
      else if (answer === undefined)
        item.reject(new FencegateError('internal_error', 'a group commit answered too few items'));
      else item.resolve(answer);
    });
  }
}
