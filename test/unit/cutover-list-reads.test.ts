/**
 * What a prefix cutover's listing pages and its completion read of the cutover's list: nothing.
 * A page adds names at the list's end and its put carries only those (a store appends them); the
 * completion changes the cutover's status and carries none. Reading the whole list on every page
 * made a listing of n names cost n²/page (100,000 names: seconds of every rollback).
 */
import { describe, expect, it } from 'vitest';
import { planCutoverChunk } from '../../src/core/plan/plan-cutover.js';
import type { CutoverRow, Put } from '../../src/core/plan/transition.js';
import { cutoverCursorPut, cutoverCursorRef } from '../../src/core/rollout-rows.js';
import { MapSnapshot } from './map-snapshot.js';
import { unreadListCutover } from './unread-list-cutover.js';

const CUTOVER = 'to-v8';
const STORED = 5_000;

/** A cutover over prefix wf- whose list holds STORED names and throws when read. */
function cutoverWithList(cursor: Parameters<typeof cutoverCursorPut>[1]): MapSnapshot {
  const snapshot = new MapSnapshot();
  const row = unreadListCutover(CUTOVER, STORED);
  snapshot.set({ type: 'cutover', cutoverId: CUTOVER }, row);
  snapshot.apply([cutoverCursorPut(CUTOVER, cursor)]);
  const names = Array.from({ length: 3 }, (_, i) => `wf-${STORED + i}`);
  snapshot.ranges.set(JSON.stringify({ type: 'scopes', prefix: 'wf-' }), names);
  for (const scope of names) {
    snapshot.set(
      { type: 'scope', scope },
      {
        fence: 1,
        holder: null,
        leaseExpiresAt: null,
        policyVersion: 'v7',
        status: 'active',
        updatedAt: 0,
      },
    );
  }
  return snapshot;
}

function cutoverPut(puts: Put[]): CutoverRow {
  const put = puts.find((p) => p.type === 'cutover');
  if (put?.type !== 'cutover') throw new Error('no cutover put');
  return put.row;
}

describe("a cutover's list, read by its pages", () => {
  it('a listing page puts the names it adds, without reading the list', () => {
    const snapshot = cutoverWithList({
      next: 0,
      listing: { of: 'prefix', prefix: 'wf-', after: `wf-${STORED - 1}` },
    });
    const transition = planCutoverChunk(snapshot, CUTOVER, 1_000);
    expect(transition.answer).toEqual({ ok: true, value: 3 });
    expect(cutoverPut(transition.put).scopes).toEqual(['wf-5000', 'wf-5001', 'wf-5002']);
    expect(transition.expect).toContainEqual(cutoverCursorRef(CUTOVER));
  });

  it('the completion puts no names and does not read the list', () => {
    const snapshot = cutoverWithList({ next: STORED, after: `wf-${STORED + 9}` });
    const transition = planCutoverChunk(snapshot, CUTOVER, 1_000);
    expect(transition.answer).toEqual({ ok: true, value: 0 });
    const row = cutoverPut(transition.put);
    expect(row.status).toBe('completed');
    expect(row.scopes).toEqual([]);
  });
});

/** A cutover given its list at the start: LISTED names, read only as pages of the list. */
function givenList(): MapSnapshot {
  const snapshot = new MapSnapshot();
  const row = unreadListCutover(CUTOVER, LISTED);
  snapshot.set({ type: 'cutover', cutoverId: CUTOVER }, row);
  const names = Array.from({ length: LISTED }, (_, i) => listed(i));
  snapshot.ranges.set(JSON.stringify({ type: 'cutoverScopes', cutoverId: CUTOVER }), names);
  return snapshot;
}

const LISTED = 5_000;
const listed = (i: number) => `wf-${String(i).padStart(5, '0')}`;

describe('a list given at the start, read by its chunks', () => {
  it('each chunk reads its own names as a page of the list, from the first chunk on', () => {
    const snapshot = givenList();
    const moved: string[] = [];
    for (let round = 0; round < 3; round++) {
      const transition = planCutoverChunk(snapshot, CUTOVER, 1_000);
      expect(transition.answer).toEqual({ ok: true, value: 1_000 });
      for (const entry of transition.audit) moved.push(entry.scope!);
      snapshot.apply(transition.put);
    }
    expect(moved).toEqual(Array.from({ length: 3_000 }, (_, i) => listed(i)));
    const pages = snapshot.listed.filter((range) => range.type === 'page');
    expect(pages).toHaveLength(3);
    for (const range of pages) if (range.type === 'page') expect(range.limit).toBe(1_000);
  });

  it('a cursor an older build left mid-list is read by index once, then a page at a time', () => {
    const snapshot = givenList();
    // Loaded without its list, as PostgreSQL loads a cutover: the list is read as a page.
    const { scopes: _list, ...row } = Object.getOwnPropertyDescriptors(
      snapshot.get({ type: 'cutover', cutoverId: CUTOVER })!,
    );
    snapshot.set({ type: 'cutover', cutoverId: CUTOVER }, Object.defineProperties({}, row));
    snapshot.apply([cutoverCursorPut(CUTOVER, { next: 1_000 })]);
    const moved: string[] = [];
    for (let round = 0; round < 3; round++) {
      const transition = planCutoverChunk(snapshot, CUTOVER, 1_000);
      for (const entry of transition.audit) moved.push(entry.scope!);
      snapshot.apply(transition.put);
    }
    expect(moved).toEqual(Array.from({ length: 3_000 }, (_, i) => listed(1_000 + i)));
    const limits = snapshot.listed.flatMap((range) => (range.type === 'page' ? [range.limit] : []));
    expect(limits.slice(1)).toEqual([1_000, 1_000]);
  });
});
