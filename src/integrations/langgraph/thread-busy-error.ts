/**
 * ThreadBusyError: a run refused because another run holds its thread (the `reject` strategy of
 * runThread). It is the store's `lease_held` answer, kept as a FencegateError of that code so a
 * caller that handles catalog codes needs nothing new, with the thread it concerns.
 */
import { FencegateError, isFencegateError } from '../../errors.js';

export class ThreadBusyError extends FencegateError {
  readonly isThreadBusyError = true;
  readonly threadId: string;
  /** Who holds the thread now. */
  readonly holder: string | null;
  /** When that holder's lease runs out unless renewed (store time, ms); null for no expiry. */
  readonly leaseExpiresAt: number | null;

  constructor(threadId: string, refusal: FencegateError) {
    const holder = typeof refusal.details.holder === 'string' ? refusal.details.holder : null;
    const expiry = refusal.details.leaseExpiresAt;
    const leaseExpiresAt = typeof expiry === 'number' ? expiry : null;
    super(
      'lease_held',
      `thread ${threadId} is busy: ${holder ?? 'another run'} holds it` +
        (leaseExpiresAt === null ? '' : ` until ${new Date(leaseExpiresAt).toISOString()}`) +
        '; retry later, or run with multitaskStrategy enqueue, interrupt or rollback',
      { ...refusal.details, threadId, holder, leaseExpiresAt },
      { cause: refusal },
    );
    this.name = 'ThreadBusyError';
    this.threadId = threadId;
    this.holder = holder;
    this.leaseExpiresAt = leaseExpiresAt;
  }
}

/** True for a ThreadBusyError, also one created by another installed copy of this package. */
export function isThreadBusyError(value: unknown): value is ThreadBusyError {
  return (
    isFencegateError(value) && (value as { isThreadBusyError?: unknown }).isThreadBusyError === true
  );
}
