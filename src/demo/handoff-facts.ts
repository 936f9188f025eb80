/**
 * Workflow memory and the two compaction policies of the incident. Each workflow's canonical
 * handoff facts are a pure function of (seed, workflow), so the checks after the demo regenerate
 * them independently instead of trusting what the demo wrote. Version 7 sometimes drops a required
 * fact (the defect that triggered the cutover); version 8 keeps every one.
 */
import { mixSeed, seededRandom, type Random } from './seeded.js';

export interface HandoffFact {
  key: string;
  value: string;
}

/** The value of each workflow's `memory` record. */
export interface WorkflowMemory {
  /** Required handoff facts: compaction must keep every one. */
  facts: HandoffFact[];
  /** Conversation notes not yet folded into the summary: what compaction removes. */
  notes: string[];
  summary: string;
}

const QUEUES = ['billing-tier2', 'returns', 'fraud-review', 'onboarding', 'escalations'];
const CALLBACKS = ['before 12:00 UTC', 'before 17:00 UTC', 'next business day'];
const NOTES = [
  'customer asked about the status of the order',
  'agent checked the shipping provider',
  'customer repeated the account email',
  'agent offered a follow-up call',
  'customer confirmed the delivery address',
  'agent summarized the previous conversation',
];

/** How often version 7 drops a required fact it should have kept. */
const V7_DROP_RATE = 0.12;

function factRandom(seed: number, workflow: number, stream: number): Random {
  return seededRandom(mixSeed(seed, workflow, stream));
}

function pick<T>(items: readonly T[], random: Random): T {
  return items[Math.floor(random() * items.length)]!;
}

/** The facts a handoff must carry for this workflow: 3 to 5 of them. */
export function canonicalFacts(seed: number, workflow: number): HandoffFact[] {
  const random = factRandom(seed, workflow, 1);
  const facts: HandoffFact[] = [
    { key: 'customer', value: `cust-${100000 + Math.floor(random() * 900000)}` },
    { key: 'open-ticket', value: `T-${workflow}-${Math.floor(random() * 10000)}` },
    { key: 'handoff-to', value: pick(QUEUES, random) },
  ];
  if (random() < 0.5) facts.push({ key: 'promised-callback', value: pick(CALLBACKS, random) });
  if (random() < 0.3) {
    facts.push({ key: 'refund-approved', value: `EUR ${10 + Math.floor(random() * 190)}.00` });
  }
  return facts;
}

export function initialMemory(seed: number, workflow: number): WorkflowMemory {
  const random = factRandom(seed, workflow, 2);
  const notes = Array.from({ length: 3 + Math.floor(random() * 3) }, () => pick(NOTES, random));
  return { facts: canonicalFacts(seed, workflow), notes, summary: 'not compacted yet' };
}

/** Version 7's compaction: folds the notes into the summary and sometimes loses a required fact. */
export function compactV7(memory: WorkflowMemory, seed: number, workflow: number): WorkflowMemory {
  const random = factRandom(seed, workflow, 7);
  const facts = memory.facts.filter(() => random() >= V7_DROP_RATE);
  return {
    facts,
    notes: [],
    summary: `v7 compaction of ${memory.notes.length} notes`,
  };
}

/** Version 8's compaction: the same folding, and every required fact kept as it was. */
export function compactV8(memory: WorkflowMemory): WorkflowMemory {
  return {
    facts: memory.facts.map((fact) => ({ ...fact })),
    notes: [],
    summary: `v8 compaction of ${memory.notes.length} notes; ${memory.facts.length} handoff facts kept`,
  };
}

/** The required facts missing from `value` (compared by key and value). */
export function missingFacts(required: readonly HandoffFact[], value: unknown): HandoffFact[] {
  const facts = (value as Partial<WorkflowMemory> | null)?.facts;
  const present = new Set(
    Array.isArray(facts) ? facts.map((fact: HandoffFact) => `${fact.key}\u0000${fact.value}`) : [],
  );
  return required.filter((fact) => !present.has(`${fact.key}\u0000${fact.value}`));
}
