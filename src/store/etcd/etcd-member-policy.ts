/**
 * Which member a call may go to. The client tries members in random order and skips one whose
 * policy refuses; this policy refuses a member for `restMs` after two calls in a row failed on it
 * (a killed member refuses connections, a frozen one lets calls run into their deadline), so a
 * silent member costs a couple of deadlines, not one per call. With one member there is nowhere
 * else to go, and it is never skipped.
 */
import type { IOptions } from 'etcd3';
import { NEVER_ABORTED } from './etcd-call-policy.js';

type HostPolicy = ReturnType<NonNullable<NonNullable<IOptions['faultHandling']>['host']>>;

const FAILURES_TO_REST = 2;

const noEvent = () => ({ dispose: () => undefined });

class MemberPolicy {
  readonly _altReturn = undefined as never;
  readonly onSuccess = noEvent;
  readonly onFailure = noEvent;
  #failures = 0;
  #restUntil = 0;

  constructor(
    private readonly restMs: number,
    private readonly alone: boolean,
  ) {}

  async execute<T>(fn: (context: { signal: AbortSignal }) => PromiseLike<T> | T): Promise<T> {
    if (!this.alone && Date.now() < this.#restUntil) {
      throw Object.assign(new Error('member skipped: circuit open after failed calls'), {
        isBrokenCircuitError: true,
      });
    }
    try {
      const value = await fn({ signal: NEVER_ABORTED });
      this.#failures = 0;
      return value;
    } catch (error) {
      this.#failures += 1;
      if (this.#failures >= FAILURES_TO_REST) {
        this.#failures = 0;
        this.#restUntil = Date.now() + this.restMs;
      }
      throw error;
    }
  }
}

export function memberPolicy(restMs: number, members: number): () => HostPolicy {
  return () => new MemberPolicy(restMs, members === 1);
}
