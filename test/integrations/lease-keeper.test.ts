/**
 * The lease keeper's local view of a lease: `lost` and the signal turn at the lease's deadline
 * (measured from when the grant was sent) whether or not the signal was read before, and a
 * release ends the lease locally with the reason that says so.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isFencegateError } from '../../src/errors.js';
import { Fencegate } from '../../src/gate.js';
import { acquireLease } from '../../src/integrations/lease-keeper.js';
import { tempDir } from '../helpers/temp-dir.js';

describe('HeldLease', () => {
  const dir = tempDir('fencegate-lease-keeper-');
  let gate: Fencegate;
  beforeEach(async () => {
    gate = await Fencegate.open({ store: `sqlite:${dir.path}/${Date.now()}.db` });
  });
  afterEach(async () => {
    await gate.close();
  });
  afterAll(() => dir.cleanup());

  const reasonCode = (signal: AbortSignal): unknown =>
    isFencegateError(signal.reason) ? signal.reason.code : signal.reason;

  it('aborts a signal read before the deadline when the lease runs out', async () => {
    const lease = await acquireLease(gate, { scope: 's/watched', holder: 'h', ttlMs: 150 });
    const signal = lease.signal;
    expect(signal.aborted).toBe(false);
    const aborted = new Promise((resolve) => signal.addEventListener('abort', resolve));
    await aborted;
    expect(lease.lost).toBe(true);
    expect(reasonCode(signal)).toBe('lease_expired');
  });

  it('reports a lease never watched as lost once it ran out, with its signal aborted', async () => {
    const lease = await acquireLease(gate, { scope: 's/unwatched', holder: 'h', ttlMs: 120 });
    expect(lease.lost).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 160));
    expect(lease.lost).toBe(true);
    expect(lease.signal.aborted).toBe(true);
    expect(reasonCode(lease.signal)).toBe('lease_expired');
  });

  it('ends the lease locally on release, and a renewal after it changes nothing', async () => {
    const lease = await acquireLease(gate, { scope: 's/released', holder: 'h', ttlMs: 60_000 });
    await lease.release();
    expect(lease.lost).toBe(true);
    expect(reasonCode(lease.signal)).toBe('authority_revoked');
    await lease.renew();
    expect(await gate.getScope('s/released')).toMatchObject({ holder: null });
  });
});
