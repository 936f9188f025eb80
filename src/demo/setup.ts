/**
 * Before the incident: the policy registry holds v7 and v8, and every workflow's memory was
 * written under v7 (each scope is pinned to v7 by its first acquire and released afterwards).
 */
import type { Fencegate } from '../gate.js';
import { fail } from '../errors.js';
import { inBatches } from './batches.js';
import { initialMemory } from './handoff-facts.js';
import { MEMORY, POLICY_V7, POLICY_V8, scopeOf, SEED_HOLDER, type IncidentPlan } from './plan.js';

/** The demo writes fixed scope names, so it needs a tenant with none of them yet. */
export async function requireEmptyTenant(gate: Fencegate): Promise<void> {
  const page = await gate.listScopes({ prefix: 'wf-', limit: 1 });
  if (page.items.length > 0) {
    fail(
      'invalid_request',
      `tenant ${gate.tenant} already holds workflow scopes (${page.items[0]!.scope}); run the demo on a fresh store`,
    );
  }
}

export interface DemoPolicy {
  version: string;
  digest: string;
  description: string;
}

/** Registers the demo's policy versions: by default the incident's v7 and v8. */
export async function registerPolicies(
  gate: Fencegate,
  policies: readonly DemoPolicy[] = [POLICY_V7, POLICY_V8],
): Promise<void> {
  for (const policy of policies) await gate.registerPolicy({ ...policy });
}

export async function createWorkflows(
  gate: Fencegate,
  plan: Pick<IncidentPlan, 'seed' | 'workflows'>,
  batchSize: number,
  onBatch: (done: number) => void,
): Promise<void> {
  const workflows = Array.from({ length: plan.workflows }, (_, i) => i);
  await inBatches(
    workflows,
    batchSize,
    async (workflow) => {
      const scope = scopeOf(workflow);
      const grant = await gate.acquire({
        scope,
        holder: SEED_HOLDER,
        ttlMs: 600_000,
        policyVersion: POLICY_V7.version,
      });
      const result = await gate.commit({
        scope,
        fence: grant.fence,
        operationId: `seed-${scope}`,
        policyVersion: POLICY_V7.version,
        writes: [{ name: MEMORY, expectRevision: 0, value: initialMemory(plan.seed, workflow) }],
      });
      if (result.outcome !== 'committed') {
        fail('internal_error', `creating ${scope} was rejected: ${result.error.code}`);
      }
      await gate.release({ scope, holder: SEED_HOLDER, fence: grant.fence });
    },
    onBatch,
  );
}
