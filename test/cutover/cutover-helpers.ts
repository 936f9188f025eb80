/**
 * Shared setup for the cutover tests: a gate on a fresh in-memory reference store (a cutover's
 * rules sit above the store; the conformance suite runs the cutover cases on each store),
 * v7-pinned scopes, audit reads.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { AuditEntry, AuditQuery, CommitResult } from '../../src/types.js';
import { memoryStore } from '../helpers/memory-store.js';

export const V7 = { version: 'v7', digest: 'sha256:v7', description: 'compaction v7' };
export const V8 = { version: 'v8', digest: 'sha256:v8', description: 'compaction v8' };
export const HOUR = 3_600_000;

export interface TestGate {
  gate: Fencegate;
  clock: ManualClock;
  close: () => Promise<void>;
}

export interface TestDir {
  path: string;
  file(name: string): string;
  cleanup(): void;
}

export function testDir(): TestDir {
  const path = mkdtempSync(join(tmpdir(), 'fencegate-cutover-'));
  return {
    path,
    file: (name) => join(path, name),
    cleanup: () => rmSync(path, { recursive: true, force: true }),
  };
}

/** A gate on a fresh in-memory reference store in store time of a manual clock. */
export async function openGate(clock = new ManualClock()): Promise<TestGate> {
  const gate = await Fencegate.open({ store: memoryStore(clock) });
  return { gate, clock, close: () => gate.close() };
}

export async function registerPolicies(gate: Fencegate): Promise<void> {
  await gate.registerPolicy(V7);
  await gate.registerPolicy(V8);
}

export function scopeName(i: number): string {
  return `wf-${i}/memory`;
}

/**
 * `count` workflows, each pinned to v7 by a first acquire, with a `memory` record at revision 1,
 * then released: the state before the v7 workers pick up their jobs.
 */
export async function createWorkflows(gate: Fencegate, count: number): Promise<string[]> {
  const scopes = Array.from({ length: count }, (_, i) => scopeName(i));
  for (let start = 0; start < count; start += 500) {
    await Promise.all(
      scopes.slice(start, start + 500).map(async (scope) => {
        const grant = await gate.acquire({
          scope,
          holder: 'seed',
          ttlMs: HOUR,
          policyVersion: 'v7',
        });
        const result = await gate.commit({
          scope,
          fence: grant.fence,
          operationId: `seed-${scope}`,
          writes: [{ name: 'memory', expectRevision: 0, value: { facts: ['customer'], n: 0 } }],
        });
        expect(result.outcome).toBe('committed');
        await gate.release({ scope, holder: 'seed', fence: grant.fence });
      }),
    );
  }
  return scopes;
}

export async function readAudit(gate: Fencegate, query: AuditQuery = {}): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  let afterSeq = query.afterSeq ?? 0;
  for (;;) {
    const page = await gate.audit({ ...query, afterSeq, limit: 1000 });
    entries.push(...page.items);
    if (page.nextAfterSeq === null) return entries;
    afterSeq = page.nextAfterSeq;
  }
}

export function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

export function rejectionCode(result: CommitResult): string | null {
  return result.outcome === 'rejected' ? result.error.code : null;
}

/** A thrown FencegateError's code (or the message of anything else), for `expect`. */
export async function codeOf(work: Promise<unknown>): Promise<string> {
  try {
    await work;
    return 'ok';
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? code : String(error);
  }
}
