import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { fingerprint } from '../../src/core/canonical.js';
import { Fencegate } from '../../src/gate.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { tempDir } from '../helpers/temp-dir.js';

const dir = tempDir();
afterAll(() => dir.cleanup());

describe('SQLite group commit', () => {
  it('answers each concurrent caller with its own outcome; a rejection aborts no other', async () => {
    const store = SqliteStore.open({
      path: join(dir.path, 'group.db'),
      clock: new ManualClock(),
      groupCommit: true,
    });
    const gate = await Fencegate.open({ store });
    const grants = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        gate.acquire({ scope: `g-${i}`, holder: 'w', ttlMs: 60_000 }),
      ),
    );
    const before = (await gate.audit({ kind: 'commit' })).items.length;
    // 64 commits issued in one turn of the event loop: odd ones carry a stale fence.
    const results = await Promise.all(
      Array.from({ length: 64 }, (_, i) => {
        const grant = grants[i % 8]!;
        return gate.commit({
          scope: grant.scope,
          fence: i % 2 === 0 ? grant.fence : grant.fence + 1,
          operationId: `op-${i}`,
          writes: [{ name: `r-${i}`, expectRevision: 0, value: { i } }],
        });
      }),
    );
    results.forEach((result, i) => {
      expect(result.operationId).toBe(`op-${i}`);
      if (i % 2 === 0) expect(result.outcome).toBe('committed');
      else expect(result.outcome === 'rejected' && result.error.code).toBe('stale_fence');
    });
    for (let i = 0; i < 64; i++) {
      const record = await gate.getRecord(`g-${i % 8}`, `r-${i}`);
      expect(record.exists).toBe(i % 2 === 0);
    }
    expect((await gate.audit({ kind: 'commit', limit: 1000 })).items.length - before).toBe(64);
    // Two commits of the same operationId in one batch: the second is a replay of the first.
    const grant = grants[0]!;
    const request = {
      scope: grant.scope,
      fence: grant.fence,
      operationId: 'twice',
      writes: [{ name: 'x', expectRevision: 0, value: 1 }],
    };
    const [first, second] = await Promise.all([gate.commit(request), gate.commit(request)]);
    expect(first).toMatchObject({ outcome: 'committed', replayed: false });
    expect(second).toMatchObject({ outcome: 'committed', replayed: true });
    expect((await verifyStore(gate.store)).violations).toEqual([]);
    await gate.close();
  });

  it('stores a value and a payload as they were at the call, not as the caller later changed them', async () => {
    const store = SqliteStore.open({ path: join(dir.path, 'snapshot.db'), groupCommit: true });
    const gate = await Fencegate.open({ store });
    const grant = await gate.acquire({ scope: 'snap', holder: 'w', ttlMs: 60_000 });
    const value = { step: 1, tags: ['a'] };
    const payload = { to: 'x' };
    const pending = gate.commit({
      scope: 'snap',
      fence: grant.fence,
      operationId: 'snap-1',
      writes: [{ name: 'r', expectRevision: 0, value }],
      intents: [{ effectKey: 'snap-effect', target: 't', payload }],
    });
    // The caller reuses its objects before the commit resolves (the batch runs on a later turn).
    value.step = 2;
    value.tags.push('b');
    payload.to = 'y';
    const result = await pending;
    const expected = fingerprint({ step: 1, tags: ['a'] });
    expect(result.outcome === 'committed' && result.records[0]?.fingerprint).toBe(expected);
    const record = await gate.getRecord('snap', 'r');
    expect(record).toMatchObject({ value: { step: 1, tags: ['a'] }, fingerprint: expected });
    expect((await gate.getIntent('snap-effect'))?.payload).toEqual({ to: 'x' });
    // The same request again is a replay: its fingerprint was taken at the first call too.
    const again = await gate.commit({
      scope: 'snap',
      fence: grant.fence,
      operationId: 'snap-1',
      writes: [{ name: 'r', expectRevision: 0, value: { step: 1, tags: ['a'] } }],
      intents: [{ effectKey: 'snap-effect', target: 't', payload: { to: 'x' } }],
    });
    expect(again.replayed).toBe(true);
    await gate.close();
  });

  it('refuses every caller with store_unavailable once the store is closed', async () => {
    const store = SqliteStore.open({ path: join(dir.path, 'closed.db'), groupCommit: true });
    await store.close();
    const gate = await Fencegate.open({ store });
    await expect(gate.commit({ scope: 's', fence: 1, operationId: 'o' })).rejects.toMatchObject({
      code: 'store_unavailable',
    });
  });
});
