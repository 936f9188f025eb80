/**
 * The byte budget (core/answer-budget.ts) of the answers that list intents and audit entries: a
 * page of intents, a claim (alone and after completions) and a page of the audit log end before
 * what they hold passes the budget, hold at least one item, and lose or repeat nothing across
 * pages or claims. On the Store itself, so a small budget stands for the default; and once through
 * the tenant-bound API, where the default budget cuts a claim of large payloads short.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../store/store.js';
import type { AuditEntry, Intent, IntentCompletion } from '../../types.js';
import { LONG_TTL, OperationIds, acquire, expectCommitted, expectFailure } from './helpers.js';
import type { ConformanceGate, SubjectFixture } from './subject.js';

const SCOPE = 'budgeted';
/**
 * An intent counts its whole JSON as answered: about 400 bytes besides its payload here, so two
 * intents of 1,002-byte payloads fit (about 2,800 bytes) and three do not.
 */
const BUDGET = 3000;

/** A payload whose JSON text has `bytes` bytes: a string of bytes - 2 characters. */
function payloadOf(bytes: number): string {
  return 'x'.repeat(bytes - 2);
}

/** Commits one intent per effect key, each with a payload of the given JSON bytes. */
async function commitIntents(
  gate: ConformanceGate,
  payloads: Record<string, number>,
  ids: OperationIds,
): Promise<void> {
  const grant = await acquire(gate, SCOPE, 'w1');
  for (const [effectKey, bytes] of Object.entries(payloads)) {
    expectCommitted(
      await gate.commit({
        scope: SCOPE,
        fence: grant.fence,
        operationId: ids.next(),
        intents: [{ effectKey, target: 'webhook', payload: payloadOf(bytes) }],
      }),
    );
  }
}

/** Claims until a claim takes nothing; the effect keys of each claim. */
async function claimAll(claim: () => Promise<Intent[]>): Promise<string[][]> {
  const claims: string[][] = [];
  for (let round = 0; round < 20; round += 1) {
    const claimed = await claim();
    if (claimed.length === 0) return claims;
    claims.push(claimed.map((intent) => intent.effectKey));
  }
  throw new Error('claims did not run dry within 20 claims');
}

async function intentPages(
  store: Store,
  tenant: string,
  limit: number,
  maxBytes: number,
): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 20; page += 1) {
    const answer = await store.listIntents(
      tenant,
      cursor === undefined ? { limit } : { limit, cursor },
      maxBytes,
    );
    pages.push(answer.items.map((intent) => intent.effectKey));
    if (answer.nextCursor === null) return pages;
    cursor = answer.nextCursor;
  }
  throw new Error('the listing did not end within 20 pages');
}

/** Every page of the tenant's intents under the budget, as answered. */
async function intentPagesOf(store: Store, tenant: string, maxBytes: number): Promise<Intent[][]> {
  const pages: Intent[][] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page += 1) {
    const answer = await store.listIntents(
      tenant,
      cursor === undefined ? { limit: 100 } : { limit: 100, cursor },
      maxBytes,
    );
    pages.push(answer.items);
    if (answer.nextCursor === null) return pages;
    cursor = answer.nextCursor;
  }
  throw new Error('the listing did not end within 50 pages');
}

function entryBytes(entry: AuditEntry): number {
  return Buffer.byteLength(JSON.stringify(entry), 'utf8');
}

/** Every page of the tenant's audit log under the budget. */
async function auditPages(
  store: Store,
  tenant: string,
  maxBytes: number,
): Promise<{ pages: AuditEntry[][]; cutShort: number }> {
  const pages: AuditEntry[][] = [];
  let cutShort = 0;
  let afterSeq = 0;
  for (let page = 0; page < 50; page += 1) {
    const answer = await store.readAudit(tenant, { afterSeq, limit: 100 }, maxBytes);
    expect(answer.items.length).toBeGreaterThan(0);
    pages.push(answer.items);
    if (answer.nextAfterSeq === null) return { pages, cutShort };
    if (answer.items.length < 100) cutShort += 1;
    afterSeq = answer.nextAfterSeq;
  }
  throw new Error('the audit log did not end within 50 pages');
}

export function answerBudgetCases(fx: SubjectFixture): void {
  describe.skipIf(!fx.capabilities.storeInProcess)('intent and audit byte budgets', () => {
    const five = { e1: 1002, e2: 1002, e3: 1002, e4: 1002, e5: 1002 };

    it('a claim takes fewer intents than its limit where they would pass the budget; the rest stay due', async () => {
      await commitIntents(fx.subject.gate, five, new OperationIds('claim-budget'));
      const { store, tenant } = fx.store;
      const claims = await claimAll(() =>
        store.claimIntents(tenant, { dispatcher: 'd1', ttlMs: LONG_TTL, limit: 5 }, BUDGET),
      );
      expect(claims).toEqual([['e1', 'e2'], ['e3', 'e4'], ['e5']]);
    });

    it('an intent whose JSON passes the whole budget is claimed alone', async () => {
      await commitIntents(
        fx.subject.gate,
        { big: 3002, small1: 1002, small2: 1002 },
        new OperationIds('claim-alone'),
      );
      const { store, tenant } = fx.store;
      const claims = await claimAll(() =>
        store.claimIntents(tenant, { dispatcher: 'd1', ttlMs: LONG_TTL, limit: 10 }, BUDGET),
      );
      expect(claims).toEqual([['big'], ['small1', 'small2']]);
    });

    it('the claim of a completion-and-claim call keeps the budget too', async () => {
      await commitIntents(fx.subject.gate, five, new OperationIds('complete-claim'));
      const { store, tenant } = fx.store;
      const request = { dispatcher: 'd1', ttlMs: LONG_TTL, limit: 1 };
      const [first] = await store.claimIntents(tenant, request, BUDGET);
      const completion: IntentCompletion = {
        effectKey: 'e1',
        claimFence: first!.claimFence,
        outcome: 'delivered',
      };
      const claimRest = { ...request, limit: 5 };
      const answer =
        store.completeAndClaim === undefined
          ? {
              completions: await store.completeIntents(tenant, [completion]),
              claim: { ok: true, intents: await store.claimIntents(tenant, claimRest, BUDGET) },
            }
          : await store.completeAndClaim(tenant, [completion], claimRest, BUDGET);
      expect(answer.completions.map((c) => c.ok)).toEqual([true]);
      expect(answer.claim.ok && answer.claim.intents.map((i) => i.effectKey)).toEqual(['e2', 'e3']);
      const rest = await claimAll(() => store.claimIntents(tenant, claimRest, BUDGET));
      expect(rest).toEqual([['e4', 'e5']]);
    });

    it('a page of intents ends where its intents would pass the budget and carries a cursor', async () => {
      await commitIntents(fx.subject.gate, five, new OperationIds('intent-pages'));
      const { store, tenant } = fx.store;
      expect(await intentPages(store, tenant, 10, BUDGET)).toEqual([
        ['e1', 'e2'],
        ['e3', 'e4'],
        ['e5'],
      ]);
      expect(await intentPages(store, tenant, 10, 1)).toEqual([
        ['e1'],
        ['e2'],
        ['e3'],
        ['e4'],
        ['e5'],
      ]);
      expect(await intentPages(store, tenant, 10, 10_000)).toEqual([
        ['e1', 'e2', 'e3', 'e4', 'e5'],
      ]);
    });

    it('intents of tiny payloads count their long fields: pages and claims keep the budget, nothing lost or repeated', async () => {
      const { gate } = fx.subject;
      const { store, tenant } = fx.store;
      // Effect keys, scope, operation ids and dispatcher near their longest, payloads of 3 bytes:
      // counted by payload alone, every intent would fit in one answer.
      const scope = 's'.repeat(250);
      const grant = await acquire(gate, scope, 'w1');
      const keys = Array.from(
        { length: 48 },
        (_, i) => `k${String(i).padStart(2, '0')}-${'k'.repeat(250)}`,
      );
      for (let start = 0; start < keys.length; start += 16) {
        expectCommitted(
          await gate.commit({
            scope,
            fence: grant.fence,
            operationId: `${'o'.repeat(250)}-${start}`,
            intents: keys.slice(start, start + 16).map((effectKey) => ({
              effectKey,
              target: 't'.repeat(128),
              payload: 1,
            })),
          }),
        );
      }
      const budget = 10_000;
      const withinBudget = (intents: Intent[]) =>
        intents.length === 1 ||
        intents.reduce((sum, i) => sum + Buffer.byteLength(JSON.stringify(i), 'utf8'), 0) <= budget;
      const pending = await intentPagesOf(store, tenant, budget);
      expect(pending.flat().map((i) => i.effectKey)).toEqual(keys);
      expect(pending.length).toBeGreaterThan(1);
      expect(pending.every(withinBudget)).toBe(true);
      const request = { dispatcher: 'd'.repeat(256), ttlMs: LONG_TTL, limit: 100 };
      const claims: Intent[][] = [];
      for (let round = 0; round < 48; round += 1) {
        const claimed = await store.claimIntents(tenant, request, budget);
        if (claimed.length === 0) break;
        claims.push(claimed);
      }
      expect(claims.flat().map((i) => i.effectKey)).toEqual(keys);
      expect(claims.length).toBeGreaterThan(1);
      expect(claims.every(withinBudget)).toBe(true);
      const claimedPages = await intentPagesOf(store, tenant, budget);
      expect(claimedPages.flat().map((i) => i.effectKey)).toEqual(keys);
      expect(claimedPages.every(withinBudget)).toBe(true);
    });

    it('audit pages end where their entries would pass the budget; no entry is lost or repeated', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds('audit-budget');
      const grant = await acquire(gate, SCOPE, 'w1');
      // Commits of 1 to 8 writes with long names: entries of a few hundred to a few thousand bytes.
      for (const writes of [1, 8, 2, 8, 8, 1, 4]) {
        expectCommitted(
          await gate.commit({
            scope: SCOPE,
            fence: grant.fence,
            operationId: ids.next(),
            writes: Array.from({ length: writes }, (_, i) => ({
              name: `${ids.next()}-${i}-${'n'.repeat(200)}`,
              expectRevision: 0,
              value: i,
            })),
          }),
        );
      }
      const { store, tenant } = fx.store;
      const whole = await store.readAudit(tenant, { limit: 100 }, Number.MAX_SAFE_INTEGER);
      expect(whole.nextAfterSeq).toBeNull();
      const budget = 4000;
      const { pages, cutShort } = await auditPages(store, tenant, budget);
      expect(pages.flat()).toEqual(whole.items);
      expect(cutShort).toBeGreaterThan(0);
      for (const page of pages) {
        const bytes = page.reduce((sum, entry) => sum + entryBytes(entry), 0);
        expect(page.length === 1 || bytes <= budget).toBe(true);
      }
      // A budget below every entry: one entry a page.
      const single = await auditPages(store, tenant, 1);
      expect(single.pages.map((page) => page.length)).toEqual(whole.items.map(() => 1));
      expect(single.pages.flat()).toEqual(whole.items);
    });
  });

  describe('intent cursors', () => {
    it('a cursor that names no effect key is refused as invalid_request on cursor', async () => {
      const { gate } = fx.subject;
      await commitIntents(gate, { c1: 10, c2: 10 }, new OperationIds('intent-cursor'));
      const first = await gate.listIntents({ limit: 1 });
      expect(first.items.map((intent) => intent.effectKey)).toEqual(['c1']);
      const next = await gate.listIntents({ limit: 1, cursor: first.nextCursor! });
      expect(next.items.map((intent) => intent.effectKey)).toEqual(['c2']);
      // "\0", invalid UTF-8, a padded form of a good cursor, and no base64url at all.
      for (const cursor of ['AA', '\u00ff', `${first.nextCursor!}=`, '!!!']) {
        const error = await expectFailure(gate.listIntents({ cursor }), 'invalid_request');
        expect(error.details).toMatchObject({ field: 'cursor' });
      }
    });
  });

  describe('the default byte budget of a claim', () => {
    it('a claim of intents whose payloads pass the default budget takes fewer, the rest the next claims', async () => {
      const { gate } = fx.subject;
      // Five payloads of 250,000 bytes: four fit the default budget of 1 MiB, five do not (a
      // store whose transaction holds less claims fewer still).
      const payloads = { p1: 250_000, p2: 250_000, p3: 250_000, p4: 250_000, p5: 250_000 };
      await commitIntents(gate, payloads, new OperationIds('default-budget'));
      const claims = await claimAll(() =>
        gate.claimIntents({ dispatcher: 'd1', ttlMs: LONG_TTL, limit: 5 }),
      );
      expect(claims.length).toBeGreaterThan(1);
      expect(claims.every((claim) => claim.length <= 4)).toBe(true);
      expect(claims.flat()).toEqual(['p1', 'p2', 'p3', 'p4', 'p5']);
      const page = await gate.listIntents({ limit: 5 });
      expect(page.items.map((intent) => intent.effectKey)).toEqual(['p1', 'p2', 'p3', 'p4']);
      expect(page.nextCursor).not.toBeNull();
    });
  });
}
