/**
 * One claimed intent, start to verdict: reconcile first when an earlier attempt may have reached
 * the provider, deliver under the intent's effectKey, and turn the answer into the completion the
 * store records. Never throws: an effector that throws or answers nonsense counts as `unknown`.
 */
import { withoutNul } from '../core/validate.js';
import type { CompleteIntentRequest, Intent } from '../types.js';
import type { DeliveryResult, Effector, LookupResult } from './effector.js';
import type { DispatchOutcome, EffectorAnswer, EffectorCall } from './metrics.js';

export interface AttemptContext {
  /** Unknown outcomes tolerated before giving up (see decideUnknownBudget). */
  maxUnknownRedeliveries: number;
  /** Attempts after which a retryable failure becomes final; Infinity for none. */
  maxAttempts: number;
  /** The backoff delay before retry number n. */
  delay(n: number): number;
  /** Aborted when the claim is about to lapse. */
  signal: AbortSignal;
  /** Milliseconds, for latency samples. */
  now(): number;
  /** Reports each effector call. */
  onEffectorCall(call: EffectorCall, answer: EffectorAnswer, ms: number): void;
}

export interface AttemptVerdict {
  completion: Omit<CompleteIntentRequest, 'claimFence'>;
  outcome: DispatchOutcome;
}

/** The store's limits on what a completion may carry. */
const MAX_ERROR_LENGTH = 1000;
const MAX_PROVIDER_REF_LENGTH = 256;
/** A provider's Retry-After is honoured up to an hour. */
const MAX_RETRY_HINT_MS = 3_600_000;

export async function attemptIntent(
  intent: Intent,
  effector: Effector,
  ctx: AttemptContext,
): Promise<AttemptVerdict> {
  // A crashed or paused dispatcher may have delivered before its claim lapsed, and an unknown
  // outcome may have been applied: either way the provider may already have the effect.
  const mayHaveBeenDelivered = intent.unknownOutcomes > 0 || intent.attempts > 1;
  const exhausted = exhaustion(intent, ctx);

  if (mayHaveBeenDelivered && effector.lookup !== undefined) {
    const found = await lookup(intent.effectKey, effector, ctx);
    if (found.status === 'delivered') {
      return {
        completion: withProviderRef({ outcome: 'delivered' }, found.providerRef),
        outcome: 'reconciled',
      };
    }
    if (exhausted !== null) {
      return giveUp(intent, `${exhausted}; the provider's lookup answered ${found.status}`);
    }
    if (found.status === 'unknown') {
      return unknownVerdict(intent, ctx, `lookup: ${found.error ?? 'no verdict'}`);
    }
  } else if (exhausted !== null) {
    return giveUp(intent, `${exhausted}; the target has no lookup to reconcile with`);
  }

  const result = await deliver(intent, effector, ctx);
  switch (result.status) {
    case 'delivered':
      return {
        completion: withProviderRef({ outcome: 'delivered' }, result.providerRef),
        outcome: 'delivered',
      };
    case 'failed':
      if (!result.retryable) {
        return {
          completion: { outcome: 'failed', retryable: false, error: clip(result.error) },
          outcome: 'failed',
        };
      }
      if (intent.attempts >= ctx.maxAttempts) {
        return {
          completion: {
            outcome: 'failed',
            retryable: false,
            error: clip(`gave up after ${intent.attempts} attempts: ${result.error}`),
          },
          outcome: 'failed',
        };
      }
      return {
        completion: {
          outcome: 'failed',
          retryable: true,
          retryAfterMs: retryDelay(ctx.delay(intent.attempts), result.retryAfterMs),
          error: clip(result.error),
        },
        outcome: 'retry',
      };
    case 'unknown':
      return unknownVerdict(intent, ctx, result.error);
  }
}

function unknownVerdict(intent: Intent, ctx: AttemptContext, error: string): AttemptVerdict {
  return {
    completion: {
      outcome: 'unknown',
      retryAfterMs: ctx.delay(intent.unknownOutcomes + 1),
      error: clip(error),
    },
    outcome: 'unknown',
  };
}

/**
 * Why the intent may not be delivered again, or null. Every retry path is bounded: unknown
 * outcomes by maxUnknownRedeliveries, claims by maxAttempts. A claim beyond maxAttempts means an
 * earlier attempt's outcome was never recorded (the failures that were recorded end at
 * maxAttempts), so whether the effect happened is unknown.
 */
function exhaustion(intent: Intent, ctx: AttemptContext): string | null {
  if (intent.unknownOutcomes > ctx.maxUnknownRedeliveries) {
    return `no verdict after ${intent.unknownOutcomes} unknown outcomes`;
  }
  if (intent.attempts > ctx.maxAttempts) {
    return `claimed ${intent.attempts} times (maxAttempts ${ctx.maxAttempts}) without a recorded verdict`;
  }
  return null;
}

function giveUp(intent: Intent, why: string): AttemptVerdict {
  const last = intent.lastError === null ? '' : `; last error: ${intent.lastError}`;
  return {
    completion: { outcome: 'needs_attention', error: clip(`${why}${last}`) },
    outcome: 'needs_attention',
  };
}

async function deliver(
  intent: Intent,
  effector: Effector,
  ctx: AttemptContext,
): Promise<DeliveryResult> {
  const started = ctx.now();
  let result: DeliveryResult;
  try {
    // The intent's own key, always: a new key would let the provider apply the effect twice.
    result = normalizeDelivery(
      await effector.deliver(intent, { effectKey: intent.effectKey, signal: ctx.signal }),
    );
  } catch (error) {
    result = { status: 'unknown', error: `the effector threw: ${describe(error)}` };
  }
  ctx.onEffectorCall('deliver', result.status, ctx.now() - started);
  return result;
}

async function lookup(
  effectKey: string,
  effector: Effector,
  ctx: AttemptContext,
): Promise<LookupResult> {
  const started = ctx.now();
  let result: LookupResult;
  try {
    result = normalizeLookup(await effector.lookup!(effectKey, { signal: ctx.signal }));
  } catch (error) {
    result = { status: 'unknown', error: `the lookup threw: ${describe(error)}` };
  }
  ctx.onEffectorCall('lookup', result.status, ctx.now() - started);
  return result;
}

/** Effectors are user code: anything but a well-formed answer means nobody knows. */
function normalizeDelivery(value: unknown): DeliveryResult {
  if (typeof value !== 'object' || value === null) return malformed();
  const result = value as Partial<DeliveryResult> & Record<string, unknown>;
  switch (result.status) {
    case 'delivered':
      return typeof result.providerRef === 'string'
        ? { status: 'delivered', providerRef: result.providerRef }
        : { status: 'delivered' };
    case 'failed': {
      const failed: DeliveryResult = {
        status: 'failed',
        retryable: result.retryable === true,
        error: typeof result.error === 'string' ? result.error : 'failed',
      };
      if (typeof result.retryAfterMs === 'number') failed.retryAfterMs = result.retryAfterMs;
      return failed;
    }
    case 'unknown':
      return {
        status: 'unknown',
        error: typeof result.error === 'string' ? result.error : 'unknown',
      };
    default:
      return malformed();
  }
}

function normalizeLookup(value: unknown): LookupResult {
  if (typeof value !== 'object' || value === null) return { status: 'unknown', error: 'malformed' };
  const result = value as Record<string, unknown>;
  if (result.status === 'delivered') {
    return typeof result.providerRef === 'string'
      ? { status: 'delivered', providerRef: result.providerRef }
      : { status: 'delivered' };
  }
  if (result.status === 'not_found') return { status: 'not_found' };
  return {
    status: 'unknown',
    error: typeof result.error === 'string' ? result.error : 'the lookup gave no verdict',
  };
}

function malformed(): DeliveryResult {
  return {
    status: 'unknown',
    error: 'the effector answered something that is not a DeliveryResult',
  };
}

function withProviderRef(
  completion: Omit<CompleteIntentRequest, 'claimFence'>,
  providerRef: string | undefined,
): Omit<CompleteIntentRequest, 'claimFence'> {
  // A reference the store would refuse is dropped rather than losing the delivered verdict.
  if (
    providerRef !== undefined &&
    providerRef.length > 0 &&
    providerRef.length <= MAX_PROVIDER_REF_LENGTH
  ) {
    completion.providerRef = withoutNul(providerRef);
  }
  return completion;
}

function retryDelay(backoffMs: number, hintMs: number | undefined): number {
  if (hintMs === undefined || !Number.isFinite(hintMs) || hintMs <= backoffMs) return backoffMs;
  return Math.round(Math.min(hintMs, MAX_RETRY_HINT_MS));
}

/** An error text as the store takes it: at most MAX_ERROR_LENGTH characters, no NUL. */
export function clip(text: string): string {
  const storable = withoutNul(text);
  return storable.length <= MAX_ERROR_LENGTH
    ? storable
    : `${storable.slice(0, MAX_ERROR_LENGTH - 1)}…`;
}

export function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : 'unknown error';
}
