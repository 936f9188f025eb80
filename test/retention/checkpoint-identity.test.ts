/**
 * A verify checkpoint names its store (an id made once per store, at random) and the seq and hash
 * of the last entry it covers. Audit retention and `verify` from a checkpoint refuse one that does
 * not match this store's log: made on another store, ending beyond this store's last entry, or
 * naming an entry this store does not have. They change nothing then, on every store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifyCheckpoint } from '../../src/audit/checkpoint.js';
import { verifyStore } from '../../src/audit/verify.js';
import { Fencegate } from '../../src/gate.js';
import { applyRetention } from '../../src/retention/retention.js';
import type { Store } from '../../src/store/store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { AREA_STORES, storesFor } from '../helpers/stores.js';

const DAY = 86_400_000;

describe.each(AREA_STORES)('verify checkpoints name their store, on $name', (kind) => {
  const stores = storesFor(kind, 'ckpt_identity');
  let ours: Store;
  let other: Store;
  const tenant = `ck-${Math.random().toString(36).slice(2, 8)}`;

  async function writeSome(store: Store, count: number): Promise<void> {
    const gate = (await Fencegate.open({ store })).forTenant(tenant);
    const { fence } = await gate.acquire({ scope: 'orders/1', holder: 'w', ttlMs: DAY });
    for (let i = 0; i < count; i++) {
      await gate.commit({ scope: 'orders/1', fence, operationId: `op-${i}`, writes: [] });
    }
  }

  async function auditCount(store: Store): Promise<number> {
    return (await store.readAudit(undefined, { limit: 1000 })).items.length;
  }

  beforeAll(async () => {
    const clock = new ManualClock(1_800_000_000_000);
    ours = (await stores.open({ clock })).store;
    other = (await stores.open({ clock })).store;
    await writeSome(ours, 3);
    await writeSome(other, 6);
  });
  afterAll(async () => {
    await ours.close();
    await other.close();
  });

  it('a checkpoint names the store it was made on and the hash of its last entry', async () => {
    const { checkpoint } = await verifyStore(ours);
    expect(checkpoint.storeId).toMatch(/^[0-9a-f]{32}$/);
    expect(checkpoint.lastHash).toMatch(/^[0-9a-f]{64}$/);
    expect((await verifyStore(other)).checkpoint.storeId).not.toBe(checkpoint.storeId);
  });

  it("refuses another store's checkpoint: retention deletes nothing, verify does not continue", async () => {
    const foreign = (await verifyStore(other)).checkpoint;
    const before = await auditCount(ours);
    await expect(applyRetention(ours, { auditCheckpoint: foreign })).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/another store/) as unknown,
    });
    await expect(verifyStore(ours, { checkpoint: foreign })).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/another store/) as unknown,
    });
    expect(await auditCount(ours)).toBe(before);
  });

  it("refuses a checkpoint beyond this store's last entry, or one whose last entry differs", async () => {
    const own = (await verifyStore(ours)).checkpoint;
    const before = await auditCount(ours);
    const beyond: VerifyCheckpoint = { ...own, lastSeq: (own.lastSeq ?? 0) + 1000 };
    const altered: VerifyCheckpoint = { ...own, lastHash: 'f'.repeat(64) };
    for (const [bad, why] of [
      [beyond, /beyond the last entry/],
      [altered, /does not match this store's entry/],
    ] as const) {
      await expect(applyRetention(ours, { auditCheckpoint: bad })).rejects.toMatchObject({
        code: 'invalid_request',
        message: expect.stringMatching(why) as unknown,
      });
      await expect(verifyStore(ours, { checkpoint: bad })).rejects.toMatchObject({
        code: 'invalid_request',
      });
    }
    expect(await auditCount(ours)).toBe(before);
  });

  it("accepts the store's own checkpoint, before and after it pruned through it", async () => {
    const own = (await verifyStore(ours)).checkpoint;
    const result = await applyRetention(ours, { auditCheckpoint: own });
    expect(result.auditPrunedThrough).toBe(own.lastSeq);
    await writeSome(ours, 1);
    const continued = await verifyStore(ours, { checkpoint: own });
    expect(continued.ok).toBe(true);
    expect(continued.checked).toBeGreaterThan(0);
    // Once pruned, the checkpoint's last entry may be gone: the store kept its hash.
    const altered: VerifyCheckpoint = { ...own, lastHash: 'f'.repeat(64) };
    await expect(verifyStore(ours, { checkpoint: altered })).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });
});
