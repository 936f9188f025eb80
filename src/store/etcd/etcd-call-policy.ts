/**
 * How one client call is attempted across members, in place of the client's default retry (three
 * attempts, throwing the last error). A call is attempted up to three times while its error is
 * one a member can recover from; when all fail, the error thrown is the gravest of the attempts
 * (etcd-errors.ts): an attempt that may have reached the raft log keeps the call in doubt even
 * when a later attempt is refused with "no leader", so a write is never reported as not applied
 * while an earlier attempt of it may still commit.
 */
import { isRecoverableError, type IOptions } from 'etcd3';
import { graverError } from './etcd-errors.js';

type GlobalPolicy = NonNullable<NonNullable<IOptions['faultHandling']>['global']>;

const ATTEMPTS = 3;
const noEvent = () => ({ dispose: () => undefined });
/** The client never aborts through the policy's signal: one that never fires serves every call. */
export const NEVER_ABORTED: AbortSignal = new AbortController().signal;

class AttemptsPolicy {
  readonly _altReturn = undefined as never;
  readonly onSuccess = noEvent;
  readonly onFailure = noEvent;

  async execute<T>(fn: (context: { signal: AbortSignal }) => PromiseLike<T> | T): Promise<T> {
    let gravest: unknown = undefined;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await fn({ signal: NEVER_ABORTED });
      } catch (error) {
        gravest = graverError(gravest, error);
        const recoverable = error instanceof Error && isRecoverableError(error);
        if (!recoverable || attempt === ATTEMPTS) throw gravest;
      }
    }
  }
}

export function attemptsPolicy(): GlobalPolicy {
  return new AttemptsPolicy();
}
