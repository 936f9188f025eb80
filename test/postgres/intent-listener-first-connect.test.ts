/**
 * The intent listener when PostgreSQL cannot be reached as it starts (the database restarting
 * while a dispatcher starts, a connection refused under load): it keeps trying, as it does for a
 * connection lost later, and listens once the server answers. Through a loopback proxy the test
 * stops and starts; the notification is sent straight to the server.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  INTENT_CHANNEL,
  listenForIntents,
} from '../../src/store/postgres/postgres-intent-listener.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';
import { pgUrl, withClient } from './pg-helpers.js';
import { TcpProxy } from './tcp-proxy.js';

const noPostgres = skipWithoutPostgres();
let proxy: TcpProxy;

beforeAll(async () => {
  if (noPostgres) return;
  const target = new URL(pgUrl());
  proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  await proxy.start();
});

afterAll(async () => {
  await proxy?.stop();
});

describe.skipIf(noPostgres)('the PostgreSQL intent listener', () => {
  it('keeps trying when its first connection is refused, and listens once the server answers', async () => {
    const proxied = new URL(pgUrl());
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    await proxy.stop();
    const heard: string[] = [];
    const stop = await listenForIntents(
      { connectionString: proxied.toString(), connectionTimeoutMillis: 2_000 },
      'first_connect',
      (tenant) => heard.push(tenant),
    );
    try {
      await delay(300);
      await proxy.start();
      // Notified until heard: the listener's next attempt comes within its growing pause.
      const deadline = Date.now() + 15_000;
      while (heard.length === 0 && Date.now() < deadline) {
        await withClient(pgUrl(), (client) =>
          client.query(`SELECT pg_notify($1, $2)`, [INTENT_CHANNEL, 'first_connect:acme']),
        );
        await delay(100);
      }
      expect(heard[0]).toBe('acme');
    } finally {
      await stop();
    }
  }, 30_000);
});
