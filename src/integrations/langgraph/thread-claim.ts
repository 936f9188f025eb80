/**
 * Taking a thread for a run under each multitask strategy: what happens when another run holds
 * it. Only `interrupt` and `rollback` take a live run's thread away; that is a takeover, which
 * over HTTP needs a worker token whose take-over right covers the thread's scope (or an operator).
 */
import type { FencegateApi } from '../../api.js';
import { isFencegateError } from '../../errors.js';
import { HeldLease, acquireLease, policyOf, type LeaseRequest } from '../lease-keeper.js';
import { ThreadBusyError } from './thread-busy-error.js';
import { waitForTurn } from './thread-tickets.js';

export const MULTITASK_STRATEGIES = ['reject', 'enqueue', 'interrupt', 'rollback'] as const;

export type MultitaskStrategy = (typeof MULTITASK_STRATEGIES)[number];

export interface ClaimOptions {
  threadId: string;
  pollMs: number;
  signal?: AbortSignal | undefined;
}

export async function claimThread(
  gate: FencegateApi,
  request: LeaseRequest,
  strategy: MultitaskStrategy,
  options: ClaimOptions,
): Promise<HeldLease> {
  if (strategy === 'enqueue') {
    return await waitForTurn(gate, {
      threadScope: request.scope,
      holder: request.holder,
      ttlMs: request.ttlMs,
      policy: policyOf(request),
      pollMs: options.pollMs,
      signal: options.signal,
    });
  }
  try {
    return await acquireLease(gate, request);
  } catch (error) {
    if (!isFencegateError(error) || error.code !== 'lease_held') throw error;
    if (strategy === 'reject') throw new ThreadBusyError(options.threadId, error);
  }
  const sentAt = Date.now();
  // A takeover names one version at most: with several, it keeps the thread's, and the caller
  // checks the grant's version is one it runs.
  const grant = await gate.takeover(request.scope, {
    holder: request.holder,
    ttlMs: request.ttlMs,
    ...(request.policyVersion === undefined ? {} : { policyVersion: request.policyVersion }),
    reason: `${strategy}: a new run on thread ${options.threadId}`,
  });
  return new HeldLease(gate, request, grant, sentAt);
}
