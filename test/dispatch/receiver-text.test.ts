/**
 * What a receiver or an effector answers is not trusted to be storable: a provider id or an error
 * text with a NUL in it is cleaned before it is recorded, a completion the store refuses is
 * recorded without its text, and an intent whose outcomes cannot be recorded at all is claimed at
 * most maxAttempts times before it ends needs_attention: no intent is re-sent forever. On the
 * in-memory reference store; test/server/free-text.test.ts checks each store's answer to a NUL.
 */
import { afterEach, expect, it } from 'vitest';
import type { Effector } from '../../src/dispatch/index.js';
import { FencegateError, type ErrorCode } from '../../src/errors.js';
import { Fencegate } from '../../src/gate.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { CompleteIntentRequest, IntentCompletion } from '../../src/types.js';
import { memoryStore } from '../helpers/memory-store.js';
import { commitIntents, roundDispatcher, webhookTo } from './helpers.js';
import { Receiver, type ReceiverAnswer } from './receiver.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Completions the store refuses, decided per call; everything else goes through. */
type Refusal = (request: CompleteIntentRequest, call: number) => ErrorCode | null;

async function setup(
  respond: () => ReceiverAnswer,
  refuse: Refusal = () => null,
): Promise<{ gate: Fencegate; clock: ManualClock; receiver: Receiver; refused: number[] }> {
  const clock = new ManualClock();
  const store = memoryStore(clock);
  const refused: number[] = [];
  let calls = 0;
  const refusal = (request: CompleteIntentRequest): FencegateError | null => {
    const code = refuse(request, ++calls);
    if (code === null) return null;
    refused.push(calls);
    return new FencegateError(code, 'refused by the test store');
  };
  const refusing = new Proxy(store, {
    get(target, property, receiver): unknown {
      const value: unknown = Reflect.get(target, property, receiver);
      if (property === 'completeIntent') {
        return (tenant: string, effectKey: string, request: CompleteIntentRequest) => {
          const error = refusal(request);
          return error === null
            ? target.completeIntent(tenant, effectKey, request)
            : Promise.reject(error);
        };
      }
      if (property === 'completeIntents') {
        // Each completion of a batch is refused or recorded on its own.
        return async (tenant: string, completions: IntentCompletion[]) => {
          const errors = completions.map(refusal);
          const passed = completions.filter((_, i) => errors[i] === null);
          const stored = passed.length === 0 ? [] : await target.completeIntents(tenant, passed);
          let next = 0;
          return errors.map((error) => (error === null ? stored[next++] : { ok: false, error }));
        };
      }
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
  const gate = await Fencegate.open({ store: refusing });
  cleanups.push(async () => {
    await gate.close();
    await store.close();
  });
  const receiver = await Receiver.start({ respond });
  cleanups.push(() => receiver.close());
  return { gate, clock, receiver, refused };
}

it('a provider id with a NUL is cleaned and the intent is delivered once', async () => {
  const { gate, receiver } = await setup(() => ({
    status: 200,
    body: { id: 'rcpt\u0000-7' },
  }));
  await commitIntents(gate, 'wf-nul', [{ effectKey: 'nul-1', target: 'crm', payload: {} }]);
  const d = roundDispatcher(gate, webhookTo(receiver.url()));
  expect(await d.runOnce()).toMatchObject({ claimed: 1, outcomes: { delivered: 1 } });
  expect(await gate.getIntent('nul-1')).toMatchObject({
    status: 'delivered',
    attempts: 1,
    providerRef: 'rcpt\uFFFD-7',
  });
  expect(receiver.requests).toHaveLength(1);
});

it("an effector's error text with a NUL is cleaned before it is stored", async () => {
  const { gate } = await setup(() => 200);
  await commitIntents(gate, 'wf-nul-error', [{ effectKey: 'nul-2', target: 'crm', payload: {} }]);
  const refusing: Effector = {
    deliver: () =>
      Promise.resolve({ status: 'failed', retryable: false, error: 'bad\u0000answer' }),
  };
  const d = roundDispatcher(gate, { crm: refusing });
  expect(await d.runOnce()).toMatchObject({ outcomes: { failed: 1 }, completionErrors: 0 });
  expect(await gate.getIntent('nul-2')).toMatchObject({
    status: 'failed',
    lastError: 'bad\uFFFDanswer',
  });
});

it('a completion refused for its text is recorded without it, after one delivery', async () => {
  const { gate, receiver, refused } = await setup(
    () => 200,
    (request) => (request.providerRef === undefined ? null : 'invalid_request'),
  );
  await commitIntents(gate, 'wf-refused', [{ effectKey: 'ref-1', target: 'crm', payload: {} }]);
  const d = roundDispatcher(gate, webhookTo(receiver.url()));
  expect(await d.runOnce()).toMatchObject({ outcomes: { delivered: 1 }, completionErrors: 0 });
  expect(await gate.getIntent('ref-1')).toMatchObject({
    status: 'delivered',
    providerRef: null,
  });
  expect(refused).toEqual([1]);
  expect(receiver.requests).toHaveLength(1);
});

it('outcomes that cannot be recorded end needs_attention after maxAttempts claims', async () => {
  const { gate, clock, receiver } = await setup(
    () => 200,
    // The store refuses every completion of the first three claims, then accepts.
    (_request, call) => (call <= 6 ? 'internal_error' : null),
  );
  await commitIntents(gate, 'wf-wedged', [{ effectKey: 'wedge-1', target: 'crm', payload: {} }]);
  const d = roundDispatcher(gate, webhookTo(receiver.url()), { maxAttempts: 3 });
  for (let claim = 1; claim <= 3; claim++) {
    expect(await d.runOnce()).toMatchObject({ claimed: 1, completionErrors: 1 });
    // The claim lapses: the intent is claimed again.
    clock.advance(30_000);
  }
  expect(await d.runOnce()).toMatchObject({ claimed: 1, outcomes: { needs_attention: 1 } });
  const intent = await gate.getIntent('wedge-1');
  expect(intent).toMatchObject({ status: 'needs_attention', attempts: 4 });
  expect(intent?.lastError).toMatch(/claimed 4 times/);
  // Three deliveries under one key, none after the bound.
  expect(receiver.requests.map((r) => r.key)).toEqual(['wedge-1', 'wedge-1', 'wedge-1']);
  clock.advance(3_600_000);
  expect((await d.runOnce()).claimed).toBe(0);
});

it('a receiver that always answers 503 ends failed: the default bound is finite', async () => {
  const { gate, clock, receiver } = await setup(() => 503);
  await commitIntents(gate, 'wf-503', [{ effectKey: 'busy-1', target: 'crm', payload: {} }]);
  const d = roundDispatcher(gate, webhookTo(receiver.url()));
  let rounds = 0;
  while ((await gate.getIntent('busy-1'))?.status === 'pending' && rounds < 1000) {
    await d.runOnce();
    rounds += 1;
    clock.advance(4000);
  }
  expect(await gate.getIntent('busy-1')).toMatchObject({ status: 'failed' });
  expect(rounds).toBeLessThan(1000);
});
