/**
 * faultyStore on a real SQLite store: what callers see for a store that is slow, down, or loses
 * the connection before or after a commit, and that the authoritative outcome settles it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isFencegateError } from '../../src/errors.js';
import { Fencegate } from '../../src/gate.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import {
  ManualClock,
  PausePoints,
  faultyStore,
  type FaultyStore,
} from '../../src/testing/index.js';
import type { CommitRequest } from '../../src/types.js';

const SCOPE = 'wf-1/memory';

let dir: string;
let store: FaultyStore;
let gate: Fencegate;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fencegate-faulty-'));
  store = faultyStore(SqliteStore.open({ path: join(dir, 'store.db'), clock: new ManualClock() }));
  gate = await Fencegate.open({ store });
});

afterEach(async () => {
  store.heal();
  await gate.close();
  rmSync(dir, { recursive: true, force: true });
});

async function codeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return 'ok';
  } catch (error) {
    if (isFencegateError(error)) return error.code;
    throw error;
  }
}

function write(fence: number, operationId: string, value: unknown): CommitRequest {
  return { scope: SCOPE, fence, operationId, writes: [{ name: 'doc', expectRevision: 0, value }] };
}

describe('faultyStore', () => {
  it('passes calls through untouched without a fault', async () => {
    const grant = await gate.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 10_000 });
    expect(grant.fence).toBe(1);
    expect(store.kind).toBe('sqlite');
    expect(store.calls.map((call) => [call.method, call.fault])).toEqual([['acquire', null]]);
  });

  it('fail-before: store_unavailable and nothing reaches the store; the same operationId may be retried', async () => {
    const grant = await gate.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 10_000 });
    store.inject({ method: 'commit', fault: 'fail-before' });
    expect(await codeOf(gate.commit(write(grant.fence, 'op-1', 'x')))).toBe('store_unavailable');
    expect(await gate.getOperation('op-1')).toBeNull();
    expect((await gate.getRecord(SCOPE, 'doc')).exists).toBe(false);
    const retried = await gate.commit(write(grant.fence, 'op-1', 'x'));
    expect(retried).toMatchObject({ outcome: 'committed', replayed: false });
  });

  it('lose-reply: the commit lands, the caller sees outcome_unknown, the stored outcome settles it', async () => {
    const grant = await gate.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 10_000 });
    store.inject({ method: 'commit', fault: 'lose-reply' });
    const request = {
      ...write(grant.fence, 'op-1', 'x'),
      intents: [{ effectKey: 'notify-1', target: 'crm', payload: 1 }],
    };
    expect(await codeOf(gate.commit(request))).toBe('outcome_unknown');
    const stored = await gate.getOperation('op-1');
    expect(stored).toMatchObject({ outcome: 'committed', replayed: false });
    expect(await gate.commit(request)).toEqual({ ...stored, replayed: true });
    expect((await gate.listIntents({})).items).toHaveLength(1);
  });

  it('unavailable: every call fails closed until the store is back', async () => {
    await gate.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 10_000 });
    store.setUnavailable(true);
    expect(await codeOf(gate.getScope(SCOPE))).toBe('store_unavailable');
    expect(await codeOf(gate.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 10_000 }))).toBe(
      'store_unavailable',
    );
    expect(await codeOf(gate.commit(write(1, 'op-1', 'x')))).toBe('store_unavailable');
    expect(await codeOf(store.ping())).toBe('store_unavailable');
    store.setUnavailable(false);
    expect((await gate.getScope(SCOPE))?.holder).toBe('w1');
    expect(await gate.getOperation('op-1')).toBeNull();
  });

  it('starts unavailable from the plan, and skip/times/when pick the calls a rule applies to', async () => {
    const down = faultyStore(store.inner, { unavailable: true });
    expect(await codeOf(down.now())).toBe('store_unavailable');

    const grant = await gate.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 10_000 });
    store.inject({
      method: 'commit',
      fault: 'fail-before',
      skip: 1,
      times: 2,
      when: ([, request]) => (request as CommitRequest).operationId.startsWith('op-'),
    });
    const codes = [];
    for (const id of ['other-1', 'op-1', 'op-2', 'op-3', 'op-4']) {
      codes.push(await codeOf(gate.commit({ scope: SCOPE, fence: grant.fence, operationId: id })));
    }
    expect(codes).toEqual(['ok', 'ok', 'store_unavailable', 'store_unavailable', 'ok']);
  });

  it('delay: a commit held in flight reaches the store after a takeover and is rejected (A3)', async () => {
    const grant = await gate.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 10_000 });
    const points = new PausePoints();
    store.inject({
      method: 'commit',
      fault: { delay: { until: () => points.reach('commit-in-flight') } },
    });
    const late = gate.commit(write(grant.fence, 'op-late', 'stale'));
    await points.waitUntilReached('commit-in-flight', late);
    const next = await gate.takeover(SCOPE, { holder: 'op' });
    points.release('commit-in-flight');
    expect(await late).toMatchObject({
      outcome: 'rejected',
      error: { code: 'stale_fence', details: { currentFence: next.fence } },
    });
  });

  it("delay after: the store answered, the reply is late, and the caller's view is old", async () => {
    const grant = await gate.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 10_000 });
    const points = new PausePoints();
    store.inject({
      method: 'getScope',
      fault: { delay: { until: () => points.reach('reply-late'), when: 'after' } },
    });
    const view = gate.getScope(SCOPE);
    await points.waitUntilReached('reply-late', view);
    await gate.takeover(SCOPE, { holder: 'op' });
    points.release('reply-late');
    // The answer describes the store before the takeover: a read is evidence, never authority.
    expect((await view)?.fence).toBe(grant.fence);
    expect((await gate.getScope(SCOPE))?.fence).toBe(grant.fence + 1);
  });
});
