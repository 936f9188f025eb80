/** The gate decision of core/gate-rules.ts: the Fisher exact p-value and when a gate may decide. */
import { describe, expect, it } from 'vitest';
import { decideGate, fisherWorse } from '../../src/core/gate-rules.js';
import type { RolloutGate } from '../../src/types.js';

describe('gate rules', () => {
  it("Fisher's one-sided p-value matches the lady tasting tea (3 of 4 against 1 of 4: 17/70)", () => {
    const p = fisherWorse({ samples: 4, failures: 3, baselineSamples: 4, baselineFailures: 1 });
    expect(p).toBeCloseTo(17 / 70, 10);
    // Large counts go through Stirling's series and stay a probability.
    const large = fisherWorse({
      samples: 5000,
      failures: 300,
      baselineSamples: 5000,
      baselineFailures: 250,
    });
    expect(large).toBeGreaterThan(0.01);
    expect(large).toBeLessThan(0.05);
  });

  it('never passes on too few samples, and decides baseline comparisons only at the end', () => {
    const gate: RolloutGate = {
      name: 'g',
      metric: 'job_failure_ratio',
      minSamples: 10,
      maxRatio: 2,
    };
    const counts = { samples: 10, failures: 5, baselineSamples: 10, baselineFailures: 1 };
    expect(decideGate(gate, { ...counts, samples: 9 }, 'end', 0).verdict).toBe('pending');
    expect(decideGate(gate, counts, 'during', 0).verdict).toBe('pending');
    expect(decideGate(gate, counts, 'end', 0)).toMatchObject({ verdict: 'fail', limit: 0.2 });
    expect(decideGate(gate, { ...counts, baselineSamples: 9 }, 'end', 0).verdict).toBe('pending');
  });
});
