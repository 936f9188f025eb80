/**
 * The compare-and-set map store (src/store/cas-map, written on fencegate/adapter's optimistic
 * engine) against the store conformance suite and the SEMANTICS model, with another writer
 * rewriting a row before every third write that rewrites one, so the engine's re-plan path runs throughout;
 * and its own cases for conflicts, contention and a lost answer.
 */
import { describe, expect, it } from 'vitest';
import { CasMapStore } from '../../src/store/cas-map/cas-map-store.js';
import { MAX_ATTEMPTS } from '../../src/store/optimistic/optimistic-engine.js';
import {
  checkModelPerTenant,
  inProcessSubject,
  type InProcessSubject,
} from '../helpers/in-process-subject.js';
import { defineStoreConformanceSuite } from '../../src/testing/vitest/index.js';

interface CasSubject extends InProcessSubject {
  casStore: CasMapStore;
}

/**
 * Another writer of the same row before every third write, once some write has applied since its
 * last one: a writer that wins a race is progress, and three writers racing on one row (three
 * operator commands on one rollout) would otherwise meet a rewrite in every round, each round
 * failing them all, for as long as the schedule lines up.
 */
function interfereOften(store: CasMapStore): void {
  let writes = 0;
  let appliedSince = true;
  const send = store.map.compareAndSet.bind(store.map);
  store.map.compareAndSet = async (write) => {
    writes += 1;
    if (writes % 3 === 0 && appliedSince) {
      store.map.interfere(1);
      appliedSince = false;
    }
    const answer = await send(write);
    if (answer.applied) appliedSince = true;
    return answer;
  };
}

async function casSubject(interfere = true): Promise<CasSubject> {
  let made: CasMapStore | undefined;
  const subject = await inProcessSubject((clock) => {
    made = new CasMapStore({ clock });
    if (interfere) interfereOften(made);
    return made;
  });
  return { ...subject, casStore: made as CasMapStore };
}

defineStoreConformanceSuite({
  name: 'cas-map',
  createStore: () => casSubject(),
  destroyStore: (subject) => (subject as CasSubject).gate.close(),
  capabilities: { sharedAcrossProcesses: false, exactLeaseExpiry: true, storeInProcess: true },
});

describe('the CAS map store', () => {
  it('plans again on the current rows when another writer changed one between read and send', async () => {
    const { gate, casStore } = await casSubject(false);
    const grant = await gate.acquire({ scope: 's', holder: 'w', ttlMs: 60_000 });
    let sends = 0;
    const send = casStore.map.compareAndSet.bind(casStore.map);
    casStore.map.compareAndSet = (write) => {
      sends += 1;
      return send(write);
    };
    casStore.map.interfere(2);
    const renewed = await gate.renew({
      scope: 's',
      holder: 'w',
      fence: grant.fence,
      ttlMs: 90_000,
    });
    expect(renewed).toMatchObject({
      fence: grant.fence,
      leaseExpiresAt: grant.leaseExpiresAt! + 30_000,
    });
    // Two sends met the other writer's row; the third, planned on it, applied.
    expect(sends).toBe(3);
    expect((await gate.getScope('s'))?.leaseExpiresAt).toBe(renewed.leaseExpiresAt);
    await gate.close();
  });

  it(`answers store_unavailable with nothing changed after ${MAX_ATTEMPTS} conflicts in a row`, async () => {
    const { gate, casStore } = await casSubject(false);
    const grant = await gate.acquire({ scope: 's', holder: 'w', ttlMs: 60_000 });
    casStore.map.interfere(MAX_ATTEMPTS);
    await expect(
      gate.renew({ scope: 's', holder: 'w', fence: grant.fence, ttlMs: 90_000 }),
    ).rejects.toMatchObject({ code: 'store_unavailable' });
    expect((await gate.getScope('s'))?.leaseExpiresAt).toBe(grant.leaseExpiresAt);
    // The next renew, with no other writer, applies.
    await expect(
      gate.renew({ scope: 's', holder: 'w', fence: grant.fence, ttlMs: 90_000 }),
    ).resolves.toMatchObject({ fence: grant.fence });
    await gate.close();
  });

  it('answers outcome_unknown on a lost answer, and the resent commit replays the stored outcome', async () => {
    const { gate, casStore } = await casSubject(false);
    const grant = await gate.acquire({ scope: 's', holder: 'w', ttlMs: 60_000 });
    const commit = {
      scope: 's',
      fence: grant.fence,
      operationId: 'op-lost',
      writes: [{ name: 'r', expectRevision: 0, value: 1 }],
    };
    casStore.map.loseAnswers(1);
    await expect(gate.commit(commit)).rejects.toMatchObject({
      code: 'outcome_unknown',
      details: { operationId: 'op-lost' },
    });
    const again = await gate.commit(commit);
    expect(again).toMatchObject({ outcome: 'committed', replayed: true });
    expect((await gate.getRecord('s', 'r')).revision).toBe(1);
    await gate.close();
  });

  it(
    'the store answers like the SEMANTICS model with conflicts injected (60 runs)',
    { timeout: 300_000 },
    async () => {
      await checkModelPerTenant(await casSubject(), 60);
    },
  );
});
