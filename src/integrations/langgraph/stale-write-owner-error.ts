/**
 * StaleWriteOwnerError: a checkpoint write refused because its writer no longer owns the thread
 * (another run claimed it, the lease ran out or was released, the thread was deleted). It is the
 * store's refusal, kept as a FencegateError of the same catalog code, with the
 * `isStaleWriteOwnerError` marker by which write-ownership suites recognise a refusal without
 * importing this package.
 */
import {
  FencegateError,
  INTEGRATION_ERRORS,
  isFencegateError,
  type ErrorCode,
} from '../../errors.js';

/**
 * The store's answers that mean the writer was superseded (nothing of its write was stored): the
 * codes the error catalog lists for this class.
 */
export const STALE_WRITE_OWNER_CODES: ReadonlySet<ErrorCode> = new Set(
  INTEGRATION_ERRORS.find((spec) => spec.name === 'StaleWriteOwnerError')?.codes,
);

export class StaleWriteOwnerError extends FencegateError {
  readonly isStaleWriteOwnerError = true;
  readonly threadId: string;

  constructor(threadId: string, refusal: FencegateError) {
    super(
      refusal.code,
      `write refused: this writer no longer owns thread ${threadId} (${refusal.message}); nothing was stored. Stop this run, or claim the thread again to continue from its last checkpoint`,
      { ...refusal.details, threadId },
      { cause: refusal },
    );
    this.name = 'StaleWriteOwnerError';
    this.threadId = threadId;
  }
}

/** The refusal as a StaleWriteOwnerError when it means a superseded writer; else unchanged. */
export function asStaleWriteOwner(threadId: string, error: unknown): unknown {
  if (!isFencegateError(error) || error instanceof StaleWriteOwnerError) return error;
  return STALE_WRITE_OWNER_CODES.has(error.code)
    ? new StaleWriteOwnerError(threadId, error)
    : error;
}

/** True for a StaleWriteOwnerError, also one created by another installed copy of this package. */
export function isStaleWriteOwnerError(value: unknown): value is StaleWriteOwnerError {
  return (
    isFencegateError(value) &&
    (value as { isStaleWriteOwnerError?: unknown }).isStaleWriteOwnerError === true
  );
}
