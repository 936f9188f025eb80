/**
 * Only a takeover re-creates a deleted scope. A cutover step finds the scope deleted (deleted
 * before the cutover, or between its listing and its step): it leaves the scope as it is, and the
 * cutover's answer and report list it as skipped. A prefix lists only active scopes.
 */
import { expect, it } from 'vitest';
import { createWorkflows, openGate, readAudit, registerPolicies } from './cutover-helpers.js';

it('skips a listed scope that was deleted, leaves it deleted and lists it', async () => {
  const { gate, close } = await openGate();
  await registerPolicies(gate);
  const scopes = await createWorkflows(gate, 3);
  const [kept, deleted, other] = scopes as [string, string, string];
  const deletion = await gate.deleteScope(deleted, { reason: 'workflow removed' });
  const before = await gate.getScope(deleted);
  expect(before).toMatchObject({ status: 'deleted', fence: deletion.fence });

  const result = await gate.cutover({
    cutoverId: 'c-deleted',
    toPolicy: 'v8',
    holder: 'controller-v8',
    scopes: [kept, deleted, other],
  });

  expect(result.fences.map((f) => f.scope)).toEqual([kept, other]);
  expect(result.scopes).toBe(2);
  expect(result.skipped).toEqual([deleted]);
  // Untouched: still deleted, same fence, no holder, no policy change.
  expect(await gate.getScope(deleted)).toEqual(before);
  const cutoverEntries = await readAudit(gate, { kind: 'cutover' });
  expect(cutoverEntries.map((e) => e.scope)).toEqual([kept, other]);
  const report = await gate.cutoverReport('c-deleted');
  expect(report).toMatchObject({ status: 'completed', scopes: 3, skipped: [deleted] });
  // Resumed or repeated, the answer is the same and still moves nothing.
  const again = await gate.cutover({
    cutoverId: 'c-deleted',
    toPolicy: 'v8',
    holder: 'controller-v8',
    scopes: [kept, deleted, other],
  });
  expect(again).toEqual(result);
  expect(await gate.getScope(deleted)).toEqual(before);
  expect(await gate.verify()).toMatchObject({ ok: true, violations: [] });
  await close();
});

it('skips a scope deleted after the cutover listed it (an interrupted cutover resumed)', async () => {
  const { gate, close } = await openGate();
  await registerPolicies(gate);
  const [first, deleted, last] = (await createWorkflows(gate, 3)) as [string, string, string];
  const request = {
    cutoverId: 'c-prefix',
    toPolicy: 'v8',
    holder: 'controller-v8',
    prefix: 'wf-',
  };
  // Started and its list built (one page holds the three scopes), as a cutover interrupted before
  // its first move leaves it: the next call with the same cutoverId resumes it and moves them.
  await gate.store.startCutover(gate.tenant, request);
  await gate.store.moveCutoverChunk(gate.tenant, 'c-prefix');
  expect(await gate.store.getCutover(gate.tenant, 'c-prefix')).toMatchObject({
    planned: 3,
    fences: [],
  });
  // Listed while active; deleted before the step that would move it.
  await gate.deleteScope(deleted, { reason: 'workflow removed' });
  const before = await gate.getScope(deleted);

  const result = await gate.cutover(request);
  expect(result.fences.map((f) => f.scope)).toEqual([first, last]);
  expect(result.skipped).toEqual([deleted]);
  expect(await gate.getScope(deleted)).toEqual(before);
  expect(await gate.cutoverReport('c-prefix')).toMatchObject({
    status: 'completed',
    scopes: 3,
    skipped: [deleted],
  });
  expect(await gate.verify()).toMatchObject({ ok: true });
  await close();
});

it('a prefix lists only the scopes that are active when its page reaches them', async () => {
  const { gate, close } = await openGate();
  await registerPolicies(gate);
  const [first, deleted, last] = (await createWorkflows(gate, 3)) as [string, string, string];
  const request = {
    cutoverId: 'c-later',
    toPolicy: 'v8',
    holder: 'controller-v8',
    prefix: 'wf-',
  };
  await gate.store.startCutover(gate.tenant, request);
  // Deleted after the start, before the listing read it: never listed, so not skipped either.
  await gate.deleteScope(deleted, { reason: 'workflow removed' });
  const result = await gate.cutover(request);
  expect(result).toMatchObject({ scopes: 2, skipped: [] });
  expect(result.fences.map((f) => f.scope)).toEqual([first, last]);
  expect(await gate.cutoverReport('c-later')).toMatchObject({ scopes: 2, skipped: [] });
  await close();
});

it('a takeover still re-creates the scope the cutover skipped', async () => {
  const { gate, close } = await openGate();
  await registerPolicies(gate);
  const [scope] = (await createWorkflows(gate, 1)) as [string];
  const deletion = await gate.deleteScope(scope);
  const result = await gate.cutover({ toPolicy: 'v8', holder: 'controller-v8', scopes: [scope] });
  expect(result).toMatchObject({ scopes: 0, fences: [], skipped: [scope] });
  const grant = await gate.takeover(scope, { holder: 'op' });
  expect(grant.fence).toBe(deletion.fence + 1);
  expect(await gate.getScope(scope)).toMatchObject({ status: 'active', holder: 'op' });
  await close();
});
