/**
 * Retention on SQLite, PostgreSQL, etcd and the in-memory reference store: stored outcomes go after their window (a repeat is then a
 * new operation, which the revision guard keeps from applying twice), audit entries go only below
 * a clean checkpoint of every tenant, exported first when asked, and verify continues from it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { Fencegate } from '../../src/gate.js';
import { applyRetention } from '../../src/retention/retention.js';
import { parseDuration } from '../../src/retention/duration.js';
import type { Store } from '../../src/store/store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { AuditEntry } from '../../src/types.js';
import { memoryStore } from '../helpers/memory-store.js';
import { AREA_STORES, storesFor, type TestStoreKind } from '../helpers/stores.js';
import { tempDir } from '../helpers/temp-dir.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const dir = tempDir();

afterAll(() => dir.cleanup());

/** The stores of the per-area suites, and the reference store, which must serve retention too. */
const RETENTION_STORES: { name: string; kind?: TestStoreKind }[] = [
  ...AREA_STORES.map((kind) => ({ name: kind.name, kind })),
  { name: 'memory' },
];

describe.each(RETENTION_STORES)('retention on $name', ({ name, kind }) => {
  const stores = kind === undefined ? undefined : storesFor(kind, 'retention');
  let clock: ManualClock;
  let store: Store;
  let gate: Fencegate;
  let fence: number;
  const tenant = `ret-${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    clock = new ManualClock(1_800_000_000_000);
    store = stores === undefined ? memoryStore(clock) : (await stores.open({ clock })).store;
    gate = (await Fencegate.open({ store })).forTenant(tenant);
    fence = (await gate.acquire({ scope: 'orders/1', holder: 'w', ttlMs: DAY })).fence;
  });
  afterAll(() => store.close());

  const write = (operationId: string, name: string) =>
    gate.commit({
      scope: 'orders/1',
      fence,
      operationId,
      writes: [{ name, expectRevision: 0, value: { operationId } }],
    });

  it('deletes stored outcomes older than the window; a repeat is then a new operation', async () => {
    expect((await write('op-old', 'a')).outcome).toBe('committed');
    clock.advance(2 * HOUR);
    expect((await write('op-new', 'b')).outcome).toBe('committed');
    const result = await applyRetention(store, { outcomeRetentionMs: HOUR });
    expect(result.outcomesDeleted).toBeGreaterThanOrEqual(1);
    expect(await gate.getOperation('op-old')).toBeNull();
    expect((await gate.getOperation('op-new'))?.outcome).toBe('committed');
    // The same request again: checked anew, and its revision guard refuses a second apply.
    const again = await write('op-old', 'a');
    expect(again.outcome === 'rejected' && again.error.code).toBe('stale_revision');
    expect(again.replayed).toBe(false);
  });

  it('prunes audit entries only through a clean checkpoint of every tenant, exporting them first', async () => {
    const first = await verifyStore(store);
    expect(first.ok).toBe(true);
    const through = first.checkpoint.lastSeq ?? 0;
    const before = await store.readAudit(undefined, { limit: 1000 });
    const covered = before.items.filter((entry) => entry.seq <= through);

    // A checkpoint of one tenant, or one with violations, deletes nothing.
    const oneTenant = (await verifyStore(store, { tenant })).checkpoint;
    await expect(applyRetention(store, { auditCheckpoint: oneTenant })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(
      applyRetention(store, { auditCheckpoint: { ...first.checkpoint, violations: 1 } }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    expect((await store.readAudit(undefined, { limit: 1000 })).items).toHaveLength(
      before.items.length,
    );

    const exportFile = join(dir.path, `${name}-audit.jsonl`);
    const result = await applyRetention(store, { auditCheckpoint: first.checkpoint, exportFile });
    expect(result).toMatchObject({ auditExported: covered.length, auditPrunedThrough: through });
    // SQLite keeps the log's newest entry, so its seq is never handed out again.
    expect(result.auditDeleted).toBe(store.kind === 'sqlite' ? covered.length - 1 : covered.length);
    const exported = readFileSync(exportFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as AuditEntry);
    expect(exported).toEqual(covered);
    const after = (await store.readAudit(undefined, { limit: 1000 })).items;
    expect(after.filter((entry) => entry.seq <= through).length).toBe(
      covered.length - result.auditDeleted,
    );

    // New history; verify continues from the checkpoint, and refuses to start from nothing.
    expect((await write('op-later', 'c')).outcome).toBe('committed');
    await expect(verifyStore(store)).rejects.toMatchObject({ code: 'invalid_request' });
    const resumed = await verifyStore(store, { checkpoint: first.checkpoint });
    expect(resumed.ok).toBe(true);
    expect(resumed.checked).toBeGreaterThanOrEqual(1);
    // Pruning again through the same checkpoint deletes nothing more.
    expect((await applyRetention(store, { auditCheckpoint: first.checkpoint })).auditDeleted).toBe(
      0,
    );
  });

  it('deletes the rollouts finished before the window with what they did per scope, and keeps the others', async () => {
    const ops = (await Fencegate.open({ store })).forTenant(`${tenant}-ro`);
    await ops.registerPolicy({ version: 'v7' });
    await ops.registerPolicy({ version: 'v8' });
    for (const scope of ['a/1', 'b/1', 'c/1', 'd/1']) {
      await ops.acquire({ scope, holder: 'w', ttlMs: HOUR, policyVersion: 'v7' });
    }
    const ramp = (rolloutId: string, prefix: string, steps: number[]) =>
      ops.rollouts.start({ rolloutId, fromPolicy: 'v7', toPolicy: 'v8', prefix, steps });
    await ramp('done', 'a/', [100]);
    await ramp('back', 'b/', [50]);
    // A driver's lease goes with its rollout.
    expect(await store.claimRolloutDriver(`${tenant}-ro`, 'back', 'server', HOUR)).not.toBeNull();
    await ops.rollouts.rollback({ rolloutId: 'back' });
    // Running for longer than the window: kept while active.
    expect((await ramp('active', 'c/', [1])).status).toBe('running');
    clock.advance(2 * DAY);
    await ramp('recent', 'd/', [100]);
    const result = await applyRetention(store, { rolloutRetentionMs: DAY });
    expect(result.rolloutsDeleted).toBe(2);
    expect((await ops.rollouts.list()).map((r) => r.rolloutId)).toEqual(['active', 'recent']);
    expect(await ops.rollouts.report('done')).toBeNull();
    expect(await store.readRolloutScopes(`${tenant}-ro`, 'done')).toEqual([]);
    expect(await store.readRolloutDriver(`${tenant}-ro`, 'back')).toBeNull();
    expect(await store.readRolloutScopes(`${tenant}-ro`, 'recent')).toHaveLength(1);
    // Its cutovers stay, and what they moved stays moved.
    expect(await ops.cutoverReport('done/step-1')).toMatchObject({ status: 'completed' });
    expect((await ops.getScope('a/1'))?.policyVersion).toBe('v8');
    expect((await applyRetention(store, { rolloutRetentionMs: DAY })).rolloutsDeleted).toBe(0);
    // Its id stays taken by its cutovers: a start under it is refused and changes nothing.
    await expect(ramp('done', 'a/', [100])).rejects.toMatchObject({
      code: 'operation_id_conflict',
      details: { cutoverId: 'done/step-1' },
    });
    expect(await ops.rollouts.get('done')).toBeNull();
  });
});

describe('durations', () => {
  it('reads a number and a unit, and refuses anything else with what to write', () => {
    expect(parseDuration('7d')).toBe(7 * DAY);
    expect(parseDuration('12h')).toBe(12 * HOUR);
    expect(parseDuration('250ms')).toBe(250);
    for (const bad of ['7', 'd', '-1d', '1.5h', '7 days'])
      expect(() => parseDuration(bad)).toThrow(/not a duration/);
  });
});
