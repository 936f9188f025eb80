/**
 * The two answers of a store that could not settle a write, with one wording for every store:
 * `store_unavailable` when nothing was changed (the write was never sent, or refused), and
 * `outcome_unknown` when it was sent and its answer lost, naming the operationId to read the
 * outcome by. A store says where it is and why (`place`, `failure`: no URL, no credentials, no
 * driver text); the rest of the message is here.
 */
import { FencegateError } from '../../errors.js';

/** `place`: "the etcd store at host:port"; `reason`: a short, secret-free reason. */
export function storeUnavailable(place: string, reason: string, cause: unknown): FencegateError {
  return new FencegateError(
    'store_unavailable',
    `${place} is unavailable (${reason}); nothing was changed`,
    {},
    { cause },
  );
}

/** `failure`: what went wrong after sending, e.g. "the etcd store at h:p did not answer in time (…)". */
export function outcomeUnknown(
  failure: string,
  cause: unknown,
  operationId: string | undefined,
): FencegateError {
  const what =
    operationId === undefined
      ? 'the operation was sent; read the scope to learn whether it applied'
      : `the commit was sent; read getOperation(${operationId}) for the outcome`;
  return new FencegateError(
    'outcome_unknown',
    `${failure} after ${what}`,
    operationId === undefined ? {} : { operationId },
    { cause },
  );
}

/**
 * The answer one write of a batch gets when the batch's send failed: an outcome_unknown names
 * that write's own operationId; any other error is the same for every write.
 */
export function forBatchMember(
  error: unknown,
  operationId: string | undefined,
  failure: (cause: unknown) => string,
): unknown {
  if (error instanceof FencegateError && error.code === 'outcome_unknown') {
    return outcomeUnknown(failure(error.cause), error.cause, operationId);
  }
  return error;
}
