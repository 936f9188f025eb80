/**
 * FencedSession under the SDK's own runner: real `run()` calls on models that implement the SDK's
 * Model interface (no network), in process and over HTTP. Turns persist and come back as the
 * model's input; the human-in-the-loop scenario of the SDK's session tests (approve, rehydrate in
 * a new run, reject) holds across claims; a superseded run's turn is refused and stores nothing;
 * a compaction racing an append keeps the appended item, where the SDK's MemorySession, measured
 * under the same race, loses it; a history transaction whose reply was lost applies once when
 * retried under its operation id.
 */
import {
  Agent,
  MemorySession,
  OpenAIResponsesCompactionSession,
  run,
  setTracingDisabled,
  tool,
  type AgentInputItem,
  type Session,
} from '@openai/agents';
import type OpenAI from 'openai';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { FencegateApi } from '../../src/api.js';
import { FencegateClient } from '../../src/client/index.js';
import { FencegateError } from '../../src/errors.js';
import { Fencegate } from '../../src/gate.js';
import {
  FencedSession,
  isStaleSessionOwnerError,
} from '../../src/integrations/openai-agents/index.js';
import { buildServer } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import type { Store } from '../../src/store/store.js';
import { memoryStore } from '../helpers/memory-store.js';
import { CompactingModel, EchoModel, ToolCallingModel, lines } from './openai-agents-fixture.js';

setTracingDisabled(true);

let store: Store;
let app: FastifyInstance;
let gate: Fencegate;
let worker: FencegateClient;
let sessionCount = 0;

beforeAll(async () => {
  store = memoryStore();
  gate = await Fencegate.open({ store });
  app = await buildServer({ store });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const token = (await issueToken(store, { tenant: 'default', role: 'worker' })).token;
  worker = new FencegateClient({ url, token });
});

afterAll(async () => {
  expect((await gate.verify()).violations).toEqual([]);
  await app.close();
  await gate.close();
});

function newSessionId(): string {
  sessionCount += 1;
  return `conversation-${sessionCount}`;
}

const claim = (on: FencegateApi, sessionId: string, whenBusy: 'fail' | 'takeOver' = 'fail') =>
  FencedSession.claim(on, { sessionId, holder: 'agent-worker', whenBusy });

describe.each([
  ['in process', () => gate as FencegateApi],
  ['over HTTP with a worker token', () => worker as FencegateApi],
])('run() with a FencedSession %s', (_, entry) => {
  it('persists each turn and hands the history to the next turn, also in a later run', async () => {
    const sessionId = newSessionId();
    const model = new EchoModel();
    const agent = new Agent({ name: 'Echo', instructions: 'Answer briefly.', model });
    const first = await claim(entry(), sessionId);
    expect((await run(agent, 'hello', { session: first })).finalOutput).toBe('reply to hello');
    await run(agent, 'and again', { session: first });
    await first.release();

    const later = await claim(entry(), sessionId);
    await run(agent, 'third time', { session: later });
    expect(model.inputs).toEqual([1, 3, 5]);
    expect(lines(await later.getItems())).toEqual([
      'user: hello',
      'assistant: reply to hello',
      'user: and again',
      'assistant: reply to and again',
      'user: third time',
      'assistant: reply to third time',
    ]);
    await later.release();
  });
});

describe('the human-in-the-loop scenario of the SDK, each turn in a run of its own', () => {
  const executed = new Map<string, number>();
  const approvalTool = (name: string, prefix: string) => {
    const created = tool({
      name,
      description: `${prefix} the query once approved`,
      parameters: z.object({ query: z.string() }),
      execute({ query }: { query: string }) {
        executed.set(name, (executed.get(name) ?? 0) + 1);
        return Promise.resolve(`${prefix}:${query}`);
      },
    });
    created.needsApproval = () => Promise.resolve(true);
    return created;
  };
  const echo = approvalTool('approved_echo', 'approved');
  const note = approvalTool('approved_note', 'approved_note');
  const model = new ToolCallingModel();

  async function turn(session: Session, message: string, toolName: string, approve: boolean) {
    const agent = new Agent({
      name: `Customer desk ${toolName}`,
      instructions: `Always call ${toolName}.`,
      model,
      tools: [echo, note],
      modelSettings: { toolChoice: toolName },
      toolUseBehavior: 'stop_on_first_tool',
    });
    const paused = await run(agent, message, { session });
    expect(paused.interruptions).toHaveLength(1);
    const approval = paused.interruptions[0]!;
    if (approve) paused.state.approve(approval);
    else paused.state.reject(approval);
    const resumed = await run(agent, paused.state, { session });
    expect(resumed.interruptions).toHaveLength(0);
    return { finalOutput: resumed.finalOutput, items: await session.getItems() };
  }

  function counts(items: AgentInputItem[]) {
    return {
      users: items.filter((item) => 'role' in item && item.role === 'user').length,
      calls: items.filter((item) => item.type === 'function_call').length,
      results: items.filter((item) => item.type === 'function_call_result').length,
    };
  }

  it('keeps approvals, a rehydrated run and a rejection in one history, each tool run once', async () => {
    const sessionId = newSessionId();
    const first = await claim(gate, sessionId);
    const one = await turn(first, 'Fetch profile for customer 104.', 'approved_echo', true);
    expect(one.finalOutput).toBe('approved:Fetch profile for customer 104.');
    expect(counts(one.items)).toEqual({ users: 1, calls: 1, results: 1 });
    await first.release();

    // Rehydrated: a new run claims the session and reads what the first one stored.
    const second = await claim(gate, sessionId);
    const two = await turn(second, 'Update note for customer 104.', 'approved_note', true);
    expect(two.finalOutput).toBe('approved_note:Update note for customer 104.');
    expect(counts(two.items)).toEqual({ users: 2, calls: 2, results: 2 });

    const three = await turn(second, 'Delete note for customer 104.', 'approved_echo', false);
    expect(three.finalOutput).toBe('Tool execution was not approved.');
    expect(counts(three.items)).toEqual({ users: 3, calls: 3, results: 3 });
    expect(executed.get('approved_echo')).toBe(1);
    expect(executed.get('approved_note')).toBe(1);
    await second.release();
  });
});

describe('a superseded run', () => {
  it('has its turn refused with StaleSessionOwnerError and stores nothing of it', async () => {
    const sessionId = newSessionId();
    const agent = new Agent({ name: 'Echo', instructions: 'Answer.', model: new EchoModel() });
    const old = await claim(gate, sessionId);
    await run(agent, 'first question', { session: old });
    const current = await claim(gate, sessionId, 'takeOver');
    await run(agent, 'second question', { session: current });

    const refused = await run(agent, 'late question', { session: old }).catch((e: unknown) => e);
    expect(isStaleSessionOwnerError(refused)).toBe(true);
    expect(refused).toMatchObject({ code: 'stale_fence', sessionId });
    expect(lines(await current.getItems())).toEqual([
      'user: first question',
      'assistant: reply to first question',
      'user: second question',
      'assistant: reply to second question',
    ]);
    await current.release();
  });
});

/**
 * The session with an append slipped in just before the runner's first write of a compaction
 * (replaceHistoryWithCompaction, or the clear of its clear-and-add fallback): as if a tool of the
 * same run appended while the turn was being compacted.
 */
function withAppendDuringCompaction<T extends Session>(session: T, item: AgentInputItem): T {
  let appended = false;
  const appendOnce = async () => {
    if (appended) return;
    appended = true;
    await session.addItems([item]);
  };
  return new Proxy(session, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (property !== 'replaceHistoryWithCompaction' && property !== 'clearSession') {
        return value.bind(target) as unknown;
      }
      return async (...args: unknown[]) => {
        await appendOnce();
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

const note: AgentInputItem = { role: 'user', content: 'note appended during the compaction' };

describe('a compaction racing an append', () => {
  async function compactedTurn(session: Session): Promise<string[]> {
    const echo = new Agent({ name: 'Echo', instructions: 'Answer.', model: new EchoModel() });
    await run(echo, 'first question', { session });
    const compacting = new Agent({
      name: 'Compacting',
      instructions: 'Answer.',
      model: new CompactingModel(),
    });
    await run(compacting, 'second question', {
      session: withAppendDuringCompaction(session, note),
    });
    return lines(await session.getItems());
  }

  it("FencedSession keeps the appended item after the runner's compaction", async () => {
    const session = await claim(gate, newSessionId());
    expect(await compactedTurn(session)).toEqual([
      'compaction',
      'assistant: reply to second question',
      'user: note appended during the compaction',
    ]);
    await session.release();
  });

  it('MemorySession, measured: the clear-and-add the runner falls back to loses it', async () => {
    expect(await compactedTurn(new MemorySession())).toEqual([
      'compaction',
      'assistant: reply to second question',
    ]);
  });
});

/** A Responses client whose compact waits for `release` and answers one compaction item. */
function compactClient(): { client: OpenAI; started: Promise<void>; release: () => void } {
  let release = () => {};
  let started = () => {};
  const waitForRelease = new Promise<void>((resolve) => (release = resolve));
  const startedPromise = new Promise<void>((resolve) => (started = resolve));
  const client = {
    responses: {
      compact: async () => {
        started();
        await waitForRelease;
        return {
          output: [{ type: 'compaction', encrypted_content: 'compacted' }],
          usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
        };
      },
    },
  } as unknown as OpenAI;
  return { client, started: startedPromise, release };
}

describe("the SDK's OpenAIResponsesCompactionSession while another run answers", () => {
  const echo = new Agent({ name: 'Echo', instructions: 'Answer.', model: new EchoModel() });

  it('over FencedSession: the superseded compaction is refused, the newer turn stays', async () => {
    const sessionId = newSessionId();
    const old = await claim(gate, sessionId);
    const stub = compactClient();
    const compacting = new OpenAIResponsesCompactionSession({
      client: stub.client,
      underlyingSession: old,
      model: 'gpt-4.1',
    });
    await run(echo, 'first question', { session: compacting });
    const compaction = compacting
      .runCompaction({ force: true, compactionMode: 'input' })
      .catch((e: unknown) => e);
    await stub.started;
    const current = await claim(gate, sessionId, 'takeOver');
    await run(echo, 'second question', { session: current });
    stub.release();

    expect(isStaleSessionOwnerError(await compaction)).toBe(true);
    expect(lines(await current.getItems())).toEqual([
      'user: first question',
      'assistant: reply to first question',
      'user: second question',
      'assistant: reply to second question',
    ]);
    await current.release();
  });

  it('over MemorySession, measured: the compaction drops the turn answered meanwhile', async () => {
    const memory = new MemorySession();
    const stub = compactClient();
    const compacting = new OpenAIResponsesCompactionSession({
      client: stub.client,
      underlyingSession: memory,
      model: 'gpt-4.1',
    });
    await run(echo, 'first question', { session: compacting });
    const compaction = compacting.runCompaction({ force: true, compactionMode: 'input' });
    await stub.started;
    await run(echo, 'second question', { session: memory });
    stub.release();
    await compaction;
    expect(lines(await memory.getItems())).toEqual(['compaction']);
  });
});

/** The gate, with the reply of its next commit lost after the commit applied. */
function losingNextReply(on: Fencegate): { gate: FencegateApi; loseNext: () => void } {
  let lose = false;
  const wrapped = new Proxy(on, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (property !== 'commit') {
        return typeof value === 'function' ? (value.bind(target) as unknown) : value;
      }
      return async (request: Parameters<Fencegate['commit']>[0]) => {
        const result = await target.commit(request);
        if (!lose) return result;
        lose = false;
        throw new FencegateError('outcome_unknown', 'the reply of this commit was lost');
      };
    },
  });
  return { gate: wrapped, loseNext: () => (lose = true) };
}

describe('session write recovery', () => {
  it('a history transaction whose reply was lost applies once when retried', async () => {
    const flaky = losingNextReply(gate);
    const session = await claim(flaky.gate, newSessionId());
    await session.addItems([{ role: 'user', content: 'question' }]);
    const args = {
      operationId: 'turn-1-output',
      transaction: {
        type: 'append_items' as const,
        items: [{ role: 'user' as const, content: 'answer stored once' }],
      },
    };
    flaky.loseNext();
    await expect(session.applyHistoryTransaction(args)).rejects.toMatchObject({
      code: 'outcome_unknown',
    });
    await session.applyHistoryTransaction(args);
    expect(lines(await session.getItems())).toEqual(['user: question', 'user: answer stored once']);
    await session.release();
  });

  it('a replacement retried after its reply was lost is not refused as a mismatch', async () => {
    const flaky = losingNextReply(gate);
    const session = await claim(flaky.gate, newSessionId());
    const blocked: AgentInputItem = { role: 'user', content: 'blocked output' };
    await session.addItems([blocked]);
    const args = {
      operationId: 'accept-output',
      transaction: {
        type: 'replace_suffix' as const,
        expectedSuffix: [blocked],
        replacement: [{ role: 'user' as const, content: 'accepted output' }],
      },
    };
    flaky.loseNext();
    await expect(session.applyHistoryTransaction(args)).rejects.toMatchObject({
      code: 'outcome_unknown',
    });
    await session.applyHistoryTransaction(args);
    expect(lines(await session.getItems())).toEqual(['user: accepted output']);
    await session.release();
  });
});
