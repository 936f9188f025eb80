/** Acquire, renew and release: the worker's side of authority. */
import {
  validateAcquire,
  validateCancelIntents,
  validateRelease,
  validateRenew,
} from '../../core/validate.js';
import { isFencegateError } from '../../errors.js';
import type { LeaseOperation } from '../metrics.js';
import { ok, route, type RouteAnswer, type RouteContext, routeFile } from '../route.js';
import { CancelIntentsResultSchema, GrantSchema, ReleaseResultSchema } from '../schemas/answers.js';

/** Runs a lease operation and counts its outcome. */
export async function countedLeaseOperation(
  ctx: RouteContext,
  operation: LeaseOperation,
  work: () => Promise<unknown>,
): Promise<RouteAnswer> {
  try {
    const result = await work();
    ctx.metrics.lease(operation, 'ok');
    return ok(result);
  } catch (error) {
    ctx.metrics.lease(operation, isFencegateError(error) ? error.code : 'internal_error');
    throw error;
  }
}

export const leaseRoutes = routeFile((s, limits) => [
  route({
    name: 'acquire',
    tag: 'leases',
    summary: 'Acquire authority over a scope (fence+1) when no live holder exists',
    body: s.AcquireBody,
    explain: { body: (value) => validateAcquire(value, limits) },
    responses: { 200: { description: 'the grant', schema: GrantSchema } },
    errors: ['lease_held', 'policy_mismatch', 'scope_deleted'],
    handler: ({ body }, ctx) =>
      countedLeaseOperation(ctx, 'acquire', () => ctx.tenantApi().acquire(body)),
  }),
  route({
    name: 'renew',
    tag: 'leases',
    summary: "Extend the current holder's lease at the current fence",
    body: s.RenewBody,
    explain: { body: (value) => validateRenew(value, limits) },
    responses: { 200: { description: 'the renewed grant', schema: GrantSchema } },
    errors: ['stale_fence', 'not_holder', 'scope_not_found', 'scope_deleted'],
    handler: ({ body }, ctx) =>
      countedLeaseOperation(ctx, 'renew', () => ctx.tenantApi().renew(body)),
  }),
  route({
    name: 'release',
    tag: 'leases',
    summary: 'Give up authority; the fence stays, the next grant bumps it',
    body: s.ReleaseBody,
    explain: { body: (value) => validateRelease(value) },
    responses: { 200: { description: 'released', schema: ReleaseResultSchema } },
    errors: ['stale_fence', 'not_holder', 'scope_not_found', 'scope_deleted'],
    handler: ({ body }, ctx) =>
      countedLeaseOperation(ctx, 'release', () => ctx.tenantApi().release(body)),
  }),
  route({
    name: 'cancelIntents',
    tag: 'leases',
    summary:
      'The holder cancels the pending intents of the runs it superseded (committed under fences from committedFrom up to its own); its fence and lease stay',
    body: s.CancelIntentsBody,
    explain: { body: (value) => validateCancelIntents(value) },
    responses: {
      200: { description: 'the effect keys cancelled', schema: CancelIntentsResultSchema },
    },
    errors: ['stale_fence', 'not_holder', 'scope_not_found', 'scope_deleted'],
    handler: ({ body }, ctx) =>
      countedLeaseOperation(ctx, 'cancel_intents', () => ctx.tenantApi().cancelIntents(body)),
  }),
]);
