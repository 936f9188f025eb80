/** The gate decision of core/gate-rules.ts: the Fisher exact p-value and when a gate may decide. */
import { describe, expect, it } from 'vitest';
import { decideGate, fisherWorse, lookPhase } from '../../src/core/gate-rules.js';
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

  it("a look inside an extended hold decides no comparison with the baseline; the extension's end does", () => {
    const worse: RolloutGate = {
      name: 'g',
      metric: 'job_failure_ratio',
      minSamples: 10,
      confidence: 0.95,
    };
    const ratio: RolloutGate = {
      name: 'r',
      metric: 'job_failure_ratio',
      minSamples: 10,
      maxRatio: 2,
    };
    const counts = { samples: 12, failures: 8, baselineSamples: 30, baselineFailures: 1 };
    for (const gate of [worse, ratio]) {
      expect(decideGate(gate, counts, 'extension', 0)).toMatchObject({
        verdict: 'pending',
        pValue: null,
      });
      expect(decideGate(gate, counts, 'end', 0).verdict).toBe('fail');
    }
    // An absolute limit still fails at once, at any look with its samples.
    const max: RolloutGate = { name: 'm', metric: 'job_failure_ratio', minSamples: 10, max: 0.5 };
    expect(decideGate(max, counts, 'extension', 0).verdict).toBe('fail');
    // And one met passes at any look of the extension that has its samples, as at the end.
    const met = { ...counts, failures: 2 };
    expect(decideGate(max, met, 'during', 0).verdict).toBe('pending');
    expect(decideGate(max, met, 'extension', 0).verdict).toBe('pass');
  });

  it("a look is the hold's end once: the first at or after it; then the extension's, until its end", () => {
    const hold = { holdEnd: 60_000, extensionEnd: 90_000 };
    expect(lookPhase({ ...hold, now: 59_999, lastLookAt: 59_000 })).toBe('during');
    expect(lookPhase({ ...hold, now: 61_000, lastLookAt: 59_000 })).toBe('end');
    expect(lookPhase({ ...hold, now: 61_000, lastLookAt: null })).toBe('end');
    // The hold's end was looked at already: the looks in between are the extension's.
    expect(lookPhase({ ...hold, now: 62_000, lastLookAt: 61_000 })).toBe('extension');
    expect(lookPhase({ ...hold, now: 89_999, lastLookAt: 89_000 })).toBe('extension');
    expect(lookPhase({ ...hold, now: 90_000, lastLookAt: 89_000 })).toBe('end');
    // No extension: every look from the hold's end on is the end.
    expect(
      lookPhase({ holdEnd: 60_000, extensionEnd: 60_000, now: 62_000, lastLookAt: 61_000 }),
    ).toBe('end');
  });
});
