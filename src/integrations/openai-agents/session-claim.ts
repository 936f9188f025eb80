/**
 * A run's claim of a session: a lease on the session's scope under a holder name of its own, so
 * that each claim gets a fence of its own even when two runs share a worker name. What happens
 * when another run holds the session is the caller's choice: fail with `lease_held`, wait until
 * its lease is released or runs out, or take it over (which supersedes that run: its writes are
 * refused from then on). Over HTTP a takeover needs an operator token, or a worker token whose
 * take-over right covers the session's scope.
 */
import { randomUUID } from 'node:crypto';
import type { FencegateApi } from '../../api.js';
import { isFencegateError } from '../../errors.js';
import { acquireLease, HeldLease, type LeaseRequest } from '../lease-keeper.js';
import { fitName } from '../name-escape.js';

export type WhenSessionBusy = 'fail' | 'wait' | 'takeOver';

export interface SessionClaimRequest {
  scope: string;
  sessionId: string;
  holder: string;
  ttlMs: number;
  whenBusy: WhenSessionBusy;
  signal?: AbortSignal | undefined;
}

export async function claimSession(
  gate: FencegateApi,
  claim: SessionClaimRequest,
): Promise<HeldLease> {
  const request: LeaseRequest = {
    scope: claim.scope,
    holder: fitName(`${claim.holder}:${randomUUID()}`),
    ttlMs: claim.ttlMs,
  };
  try {
    return await acquireLease(gate, request, {
      wait: claim.whenBusy === 'wait',
      ...(claim.signal === undefined ? {} : { signal: claim.signal }),
    });
  } catch (error) {
    const busy = isFencegateError(error) && error.code === 'lease_held';
    if (!busy || claim.whenBusy !== 'takeOver') throw error;
  }
  const sentAt = Date.now();
  const grant = await gate.takeover(claim.scope, {
    holder: request.holder,
    ttlMs: request.ttlMs,
    reason: `a new run claimed session ${claim.sessionId}`,
  });
  return new HeldLease(gate, request, grant, sentAt);
}
