/**
 * The Effector interface: how the dispatcher reaches one external system. An effector performs a
 * claimed intent's effect and says what happened, in the three words a network allows: it
 * happened, it did not (and whether trying again may help), or nobody can tell.
 */
import type { Intent } from '../types.js';

export interface DeliveryContext {
  /**
   * The intent's effectKey: pass it to the provider as its idempotency key (the webhook effector
   * sends it as `Idempotency-Key`). It is the same on every attempt, from every dispatcher, for
   * every worker generation; an effector must never mint a key of its own.
   */
  effectKey: string;
  /**
   * Aborted when the dispatcher's claim is about to lapse (after that another dispatcher may claim
   * the intent and deliver it again). An effector stops waiting when it fires and answers
   * `unknown` if the request may already have been sent.
   */
  signal: AbortSignal;
}

/** The provider performed the effect (now, or on an earlier attempt under the same key). */
export interface DeliveredResult {
  status: 'delivered';
  /** The provider's reference for the effect (a message id, a charge id); at most 256 characters. */
  providerRef?: string;
}

/** The provider answered that it did not perform the effect. */
export interface FailedResult {
  status: 'failed';
  /** true when a later attempt may succeed (server errors, rate limits, connection refused). */
  retryable: boolean;
  /** What went wrong, for operators. Never put payloads or secrets in it. */
  error: string;
  /** The provider's own hint (e.g. Retry-After) of when to try again, in ms. */
  retryAfterMs?: number;
}

/** Nobody can tell whether the effect happened (a timeout, a connection lost after sending). */
export interface UnknownResult {
  status: 'unknown';
  error: string;
}

export type DeliveryResult = DeliveredResult | FailedResult | UnknownResult;

/** What the provider knows about an effect key, for reconciliation. */
export type LookupResult =
  | { status: 'delivered'; providerRef?: string }
  | { status: 'not_found' }
  | { status: 'unknown'; error?: string };

export interface Effector {
  /**
   * Performs the intent's effect under `context.effectKey`. Called again with the same key after a
   * retryable failure, after an unknown outcome (when `lookup` is absent or answered `not_found`)
   * and after a dispatcher died holding the claim, so the provider must treat a repeated key as the
   * same effect. Throwing is treated as `unknown`.
   */
  deliver(intent: Intent, context: DeliveryContext): Promise<DeliveryResult>;
  /**
   * Optional: asks the provider whether the effect of `effectKey` happened. The dispatcher calls it
   * before delivering an intent that may already have been delivered (an earlier attempt ended
   * unknown, or a dispatcher lost its claim mid-delivery): `delivered` completes the intent without
   * a second delivery, `not_found` delivers, `unknown` leaves the intent for a later reconciliation.
   * Throwing is treated as `unknown`.
   */
  lookup?(effectKey: string, context: { signal: AbortSignal }): Promise<LookupResult>;
}
