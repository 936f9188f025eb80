/**
 * Version 8's compaction in the rollout demo, and its defect: it keeps only the handoff facts that
 * fit a budget, and divides that budget by its share of the traffic. At 5 % every fact fits; at
 * 25 % workflows with more than three facts lose the last ones. Version 7 keeps every fact.
 */
import type { WorkflowMemory } from '../handoff-facts.js';

/** The facts v8 can carry at 1 % of the traffic; at p %, a p-th of them. */
const V8_FACT_CONTEXT = 75;

export function v8FactBudget(percent: number): number {
  return Math.floor(V8_FACT_CONTEXT / percent);
}

export function compactV8(memory: WorkflowMemory, percent: number): WorkflowMemory {
  const facts = memory.facts.slice(0, v8FactBudget(percent)).map((fact) => ({ ...fact }));
  return {
    facts,
    notes: [],
    summary: `v8 compaction of ${memory.notes.length} notes; ${facts.length} handoff facts kept`,
  };
}

export function compactV7(memory: WorkflowMemory): WorkflowMemory {
  return {
    facts: memory.facts.map((fact) => ({ ...fact })),
    notes: [],
    summary: `v7 compaction of ${memory.notes.length} notes`,
  };
}
