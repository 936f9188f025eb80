/**
 * FencegateClient.readRecords over real HTTP: one exchange answers the records and pages asked,
 * each as getRecord and listRecordsPage answer it; a refused read is the library's error.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startHarness, type OpsHarness } from './harness.js';

let harness: OpsHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('FencegateClient.readRecords', () => {
  it('answers as getRecord and listRecordsPage do, in one exchange', async () => {
    harness = await startHarness();
    const client = harness.client('worker');
    const scope = 'lg/thread-2';
    const grant = await client.acquire({ scope, holder: 'w', ttlMs: 60_000 });
    const names = ['cp/1', 'cp/2', 'wr/2/t/0', 'bl/v/1'];
    const committed = await client.commit({
      scope,
      fence: grant.fence,
      operationId: 'seed',
      writes: names.map((name) => ({ name, expectRevision: 0, value: name })),
    });
    expect(committed.outcome).toBe('committed');

    const answer = await client.readRecords(scope, {
      records: ['bl/v/1', 'bl/v/9'],
      pages: [{ prefix: 'cp/', direction: 'desc', limit: 1 }, { prefix: 'wr/2/' }],
    });
    expect(answer.records).toEqual([
      await client.getRecord(scope, 'bl/v/1'),
      await client.getRecord(scope, 'bl/v/9'),
    ]);
    expect(answer.pages).toEqual([
      await client.listRecordsPage(scope, { prefix: 'cp/', direction: 'desc', limit: 1 }),
      await client.listRecordsPage(scope, { prefix: 'wr/2/' }),
    ]);
    expect(answer.pages[0]?.items.map((record) => record.name)).toEqual(['cp/2']);
    expect(answer.pages[0]?.nextCursor).not.toBeNull();
  });

  it('follows a page the byte budget cut short: listRecords reads every record, a page carries its cursor', async () => {
    // Each value's JSON text is 100 bytes; the server's budget holds two of them.
    harness = await startHarness({ limits: { maxPageBytes: 200 } });
    const client = harness.client('worker');
    const scope = 'lg/thread-3';
    const grant = await client.acquire({ scope, holder: 'w', ttlMs: 60_000 });
    const names = ['cp/1', 'cp/2', 'cp/3', 'cp/4', 'cp/5'];
    const value = (name: string) => name.padEnd(98, '.');
    await client.commit({
      scope,
      fence: grant.fence,
      operationId: 'seed',
      writes: names.map((name) => ({ name, expectRevision: 0, value: value(name) })),
    });

    const all = await client.listRecords(scope);
    expect(all.map((record) => [record.name, record.value])).toEqual(
      names.map((name) => [name, value(name)]),
    );
    const first = await client.listRecordsPage(scope, { prefix: 'cp/', limit: 10 });
    expect(first.items.map((record) => record.name)).toEqual(['cp/1', 'cp/2']);
    expect(first.nextCursor).not.toBeNull();
  });

  it('raises invalid_request for a read that is not valid', async () => {
    harness = await startHarness();
    const client = harness.client('worker');
    await expect(client.readRecords('lg/t', { pages: [{ limit: 0 }] })).rejects.toMatchObject({
      code: 'invalid_request',
      details: { field: 'pages[0].limit' },
    });
    await expect(client.readRecords('lg/t', {})).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });
});
