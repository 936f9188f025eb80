/**
 * Two replicas of an OpenAI Agents chat service on one conversation, each a worker of a fencegate
 * server. Replica A claims the session and answers a turn; the user's next message lands on
 * replica B, which claims the session (a takeover: its worker token was created with the take-over
 * right for `openai-agents/`) and answers. A's late turn is then refused with
 * StaleSessionOwnerError and nothing of it is stored. The model is a local stand-in for a real
 * one (no network, no API key).
 *
 *   npx tsx examples/openai-agents-session.ts
 */
import { randomBytes } from 'node:crypto';
import {
  Agent,
  Usage,
  run,
  setTracingDisabled,
  type Model,
  type ModelRequest,
  type ModelResponse,
  type ResponseStreamEvent,
} from '@openai/agents';
import { Fencegate } from 'fencegate';
import { FencegateAdminClient, FencegateClient } from 'fencegate/client';
import { FencedSession, isStaleSessionOwnerError } from 'fencegate/openai-agents';
import { buildServer } from 'fencegate/server';

setTracingDisabled(true);

/** Answers every message with how many items of history it was given. */
class LocalModel implements Model {
  getResponse(request: ModelRequest): Promise<ModelResponse> {
    const seen = typeof request.input === 'string' ? 1 : request.input.length;
    return Promise.resolve({
      usage: new Usage(),
      output: [
        {
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: `I have ${seen} items of this conversation.` }],
        },
      ],
    });
  }

  getStreamedResponse(): AsyncIterable<ResponseStreamEvent> {
    throw new Error('this example does not stream');
  }
}

const gate = await Fencegate.open({ store: 'sqlite::memory:' });
const adminToken = randomBytes(32).toString('base64url');
const server = await buildServer({ store: gate.store, adminToken });
const url = await server.listen({ host: '127.0.0.1', port: 0 });

// A worker token that may also take over session scopes (fencegate token create … --may-take-over).
const admin = new FencegateAdminClient({ url, adminToken });
const { token } = await admin.createToken({
  tenant: 'acme',
  role: 'worker',
  mayTakeOver: ['openai-agents/'],
});
const agent = new Agent({
  name: 'Support',
  instructions: 'Help briefly.',
  model: new LocalModel(),
});
const claim = (holder: string) =>
  FencedSession.claim(new FencegateClient({ url, token }), {
    sessionId: 'conversation-42',
    holder,
    whenBusy: 'takeOver',
  });

const replicaA = await claim('replica-a');
console.log('A:', (await run(agent, 'My order is late.', { session: replicaA })).finalOutput);

const replicaB = await claim('replica-b');
console.log('B:', (await run(agent, 'Can you check again?', { session: replicaB })).finalOutput);

try {
  await run(agent, 'A late duplicate of the first message', { session: replicaA });
  throw new Error('the superseded replica wrote the session');
} catch (error) {
  if (!isStaleSessionOwnerError(error)) throw error;
  console.log(`A's late turn refused (${error.code}); nothing of it was stored`);
}

const history = await replicaB.getItems();
console.log(`history: ${history.length} items, the last one B's answer`);
if (history.length !== 4) throw new Error(`expected 4 items, found ${history.length}`);
await replicaB.release();
await server.close();
await gate.close();
