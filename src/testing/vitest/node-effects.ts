/**
 * validateNodeEffects: registers the node-effect clauses (node-effects-clauses.ts) as a vitest
 * suite, one case per clause, for any checkpointer that can claim a thread and stage effects, in
 * the shape of validateWriteOwnership.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  NODE_EFFECT_CLAUSES,
  type NodeEffectsClause,
  type NodeEffectsSubject,
} from './node-effects-clauses.js';
import type { WriteOwnershipCheckpointer } from './write-ownership-clauses.js';

export interface NodeEffectsTestInitializer<T extends WriteOwnershipCheckpointer> {
  /** Names the suite in test output. */
  checkpointerName: string;
  /** Once before the cases (start a store, a server…). Default timeout 10,000 ms. */
  beforeAll?(): void | Promise<void>;
  beforeAllTimeout?: number;
  afterAll?(): void | Promise<void>;
  /** The checkpointer, and how the clauses stage effects and read what was committed. */
  createSubject(): NodeEffectsSubject<T> | Promise<NodeEffectsSubject<T>>;
  /** After the cases: close it, check what it wrote. */
  destroySubject?(subject: NodeEffectsSubject<T>): void | Promise<void>;
  /** Clauses known to fail, as measured: each passes only while it still fails. */
  expectedFailures?: readonly NodeEffectsClause[];
}

export function validateNodeEffects<T extends WriteOwnershipCheckpointer>(
  initializer: NodeEffectsTestInitializer<T>,
): void {
  const expectedFailures = new Set(initializer.expectedFailures ?? []);
  describe(`${initializer.checkpointerName}: node effects`, () => {
    let subject: NodeEffectsSubject<T> | undefined;
    beforeAll(async () => {
      await initializer.beforeAll?.();
      subject = await initializer.createSubject();
    }, initializer.beforeAllTimeout ?? 10_000);
    afterAll(async () => {
      if (subject !== undefined) await initializer.destroySubject?.(subject);
      await initializer.afterAll?.();
    });
    for (const [name, clause] of Object.entries(NODE_EFFECT_CLAUSES)) {
      const register = expectedFailures.has(name as NodeEffectsClause) ? it.fails : it;
      register(name, async () => {
        if (subject === undefined) throw new Error('createSubject did not run');
        await clause(subject);
      });
    }
  });
}
