/**
 * Integers no JavaScript number holds exactly (beyond ±(2^53−1)) are never rounded: over HTTP the
 * raw body text is checked before it is parsed, in the library the value itself; either way the
 * answer is invalid_request naming the JSON path, and nothing changes. Before this check,
 * 9007199254740993 was stored as 9007199254740992, and a second request with 9007199254740992
 * under the same operationId was answered as a replay of the first.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isFencegateError } from '../../src/errors.js';
import { errorOf, serverFixture, type ServerFixture } from './fixture.js';
import { memoryGate } from '../helpers/memory-store.js';

const SCOPE = 'wf-1/ledger';

describe('integers beyond ±(2^53−1) over HTTP', () => {
  let f: ServerFixture;
  let fence: number;

  beforeEach(async () => {
    f = await serverFixture();
    const grant = await f.send('POST', '/v1/leases/acquire', f.tokens.workerA, {
      scope: SCOPE,
      holder: 'w1',
      ttlMs: 60_000,
    });
    fence = grant.json<{ fence: number }>().fence;
  });
  afterEach(() => f.close());

  const commitText = (operationId: string, amount: string) =>
    `{"scope":"${SCOPE}","fence":${fence},"operationId":"${operationId}",` +
    `"writes":[{"name":"balance","expectRevision":0,"value":{"account":"a-1","amount":${amount}}}]}`;

  it('refuses an unsafe integer in a value, names its path, and stores nothing', async () => {
    const answer = await f.send(
      'POST',
      '/v1/commit',
      f.tokens.workerA,
      commitText('op-1', '9007199254740993'),
    );
    expect(answer.statusCode).toBe(400);
    const error = errorOf(answer);
    expect(error.code).toBe('invalid_request');
    expect(error.details).toEqual({ field: 'writes[0].value.amount' });
    expect(error.message).toContain('writes[0].value.amount');
    expect(error.message).toContain('9007199254740993');
    const record = await f.send(
      'GET',
      `/v1/scopes/${encodeURIComponent(SCOPE)}/records/balance`,
      f.tokens.workerA,
    );
    expect(record.json()).toMatchObject({ exists: false, revision: 0 });
    expect((await f.send('GET', '/v1/operations/op-1', f.tokens.workerA)).statusCode).toBe(404);

    // The request that JSON.parse would have confused with it is a first commit, not a replay.
    const other = await f.send(
      'POST',
      '/v1/commit',
      f.tokens.workerA,
      commitText('op-1', '9007199254740991'),
    );
    expect(other.json()).toMatchObject({ outcome: 'committed', replayed: false });
  });

  it('names the path of an unsafe integer anywhere in the body, in any notation', async () => {
    const cases: [string, string][] = [
      [commitText('op-2', '-12345678901234567890'), 'writes[0].value.amount'],
      [commitText('op-3', '1e300'), 'writes[0].value.amount'],
      [commitText('op-4', '9007199254740993.5'), 'writes[0].value.amount'],
      [
        `{"scope":"${SCOPE}","fence":${fence},"operationId":"op-5","intents":[{"effectKey":"fx-1",` +
          `"target":"crm","payload":{"ids":[1,2,{"a key":18446744073709551615}]}}]}`,
        'intents[0].payload.ids[2].a key',
      ],
      [`{"scope":"${SCOPE}","fence":9007199254740993,"operationId":"op-6"}`, 'fence'],
    ];
    for (const [body, path] of cases) {
      const answer = await f.send('POST', '/v1/commit', f.tokens.workerA, body);
      expect(answer.statusCode, body).toBe(400);
      expect(errorOf(answer), body).toMatchObject({
        code: 'invalid_request',
        details: { field: path },
      });
    }
    const audit = await f.send('GET', '/v1/audit?kind=commit', f.tokens.operatorA);
    expect(audit.json<{ items: unknown[] }>().items).toEqual([]);
  });

  it('keeps safe integers, decimals and digits inside strings as they are', async () => {
    const body =
      `{"scope":"${SCOPE}","fence":${fence},"operationId":"op-7","writes":[{"name":"balance",` +
      `"expectRevision":0,"value":{"max":9007199254740991,"min":-9007199254740991,"rate":0.125,` +
      `"big":"123456789012345678901234567890","e":"2e400"}}]}`;
    const answer = await f.send('POST', '/v1/commit', f.tokens.workerA, body);
    expect(answer.json()).toMatchObject({ outcome: 'committed' });
    const record = await f.send(
      'GET',
      `/v1/scopes/${encodeURIComponent(SCOPE)}/records/balance`,
      f.tokens.workerA,
    );
    expect(record.json<{ value: unknown }>().value).toEqual({
      max: 9007199254740991,
      min: -9007199254740991,
      rate: 0.125,
      big: '123456789012345678901234567890',
      e: '2e400',
    });
  });
});

describe('integers beyond ±(2^53−1) in the library', () => {
  it('refuses an unsafe integer number or a bigint in a value, naming its path', async () => {
    const gate = await memoryGate();
    const grant = await gate.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 60_000 });
    const attempts: [unknown, string][] = [
      [{ amount: 2 ** 53 }, 'writes[0].value.amount'],
      [{ amount: 12345678901234567890n }, 'writes[0].value.amount'],
      [[0, [1, -(2 ** 63)]], 'writes[0].value[1][1]'],
    ];
    for (const [value, path] of attempts) {
      const refusal = await gate
        .commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: 'op-lib',
          writes: [{ name: 'balance', expectRevision: 0, value }],
        })
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(isFencegateError(refusal) && refusal.code).toBe('invalid_request');
      expect(isFencegateError(refusal) && refusal.details).toEqual({ field: path });
    }
    expect(await gate.getOperation('op-lib')).toBeNull();
    expect(await gate.getRecord(SCOPE, 'balance')).toMatchObject({ exists: false });
    await gate.close();
  });
});
