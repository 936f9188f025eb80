/**
 * The admin client after a lost reply: a token deletion whose reply was lost is sent again, and
 * what that resend answers cannot say "nothing happened". A resend answered not_found says the
 * lost attempt may be the one that deleted it; a resend that cannot reach the server is an
 * unknown outcome, never store_unavailable.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { FencegateAdminClient, FencegateError } from '../../src/client/index.js';
import { buildServer } from '../../src/server/build-server.js';
import type { Store } from '../../src/store/store.js';
import { memoryStore } from '../helpers/memory-store.js';
import { FaultProxy, type ProxyFault } from './fault-proxy.js';

const ADMIN = 'fg_admin-token-for-the-lost-reply-test';
let app: FastifyInstance | undefined;
let store: Store | undefined;
let proxy: FaultProxy | undefined;

afterEach(async () => {
  await proxy?.stop();
  await app?.close();
  await store?.close();
});

async function adminThrough(fault: ProxyFault): Promise<FencegateAdminClient> {
  store = memoryStore();
  app = await buildServer({ store, adminToken: ADMIN });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  proxy = new FaultProxy(url);
  proxy.inject('DELETE', '/v1/admin/tokens/', fault);
  return new FencegateAdminClient({ url: await proxy.start(), adminToken: ADMIN });
}

async function refusal(call: Promise<unknown>): Promise<FencegateError> {
  const error = await call.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(FencegateError);
  return error as FencegateError;
}

describe('FencegateAdminClient.deleteToken after a lost reply', () => {
  it('says the lost attempt may have deleted it when the resend finds no such token', async () => {
    const admin = await adminThrough('drop-reply');
    const { id } = await admin.createToken({ tenant: 'acme', role: 'worker' });
    const error = await refusal(admin.deleteToken(id));
    expect(error.code).toBe('not_found');
    expect(error.details.afterLostReply).toBe(true);
    expect((await admin.listTokens('acme')).map((token) => token.id)).not.toContain(id);
  });

  it('is an unknown outcome when the resend cannot reach the server', async () => {
    const admin = await adminThrough('drop-reply-then-down');
    const { id } = await admin.createToken({ tenant: 'acme', role: 'worker' });
    const error = await refusal(admin.deleteToken(id));
    expect(error.code).toBe('outcome_unknown');
  });
});
