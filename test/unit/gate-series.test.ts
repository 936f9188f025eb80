/**
 * The gates' series in the driver's document (core/gate-series.ts): bounded per gate and over all
 * gates, spanning the step from its first look to its latest, and answered per gate in the
 * rollout's order, none for another step or a document stored before series existed.
 */
import { describe, expect, it } from 'vitest';
import {
  addGateReadings,
  answeredGateSeries,
  GATE_SERIES_READINGS,
  gateSeriesBound,
} from '../../src/core/gate-series.js';
import { MAX_GATES } from '../../src/core/validate-rollout-gates.js';
import type { RolloutGate, RolloutGateResult, RolloutGateSeries } from '../../src/types.js';

function result(name: string, at: number): RolloutGateResult {
  return {
    name,
    verdict: 'pending',
    value: at / 1000,
    baseline: null,
    samples: at,
    baselineSamples: 0,
    limit: 0.5,
    pValue: null,
    at,
  };
}

const GATES: RolloutGate[] = [
  { name: 'errors', metric: 'external', source: 'errors', minSamples: 1, max: 0.5 },
  { name: 'jobs', metric: 'job_failure_ratio', minSamples: 5, max: 0.2 },
];

describe('the gate series', () => {
  it('keeps every reading, with what the reading has, until the bound', () => {
    let series: RolloutGateSeries[] = [];
    for (let look = 1; look <= GATE_SERIES_READINGS; look++) {
      series = addGateReadings(series, [result('errors', look), result('jobs', look)]);
    }
    expect(series.map((s) => s.name)).toEqual(['errors', 'jobs']);
    expect(series[0]!.readings.map((r) => r.at)).toEqual(
      Array.from({ length: GATE_SERIES_READINGS }, (_, i) => i + 1),
    );
    const { name: _name, ...reading } = result('errors', 7);
    expect(series[0]!.readings[6]).toEqual(reading);
  });

  it('never holds more than the bound, and spans the step from its first look to its latest', () => {
    let series: RolloutGateSeries[] = [];
    let longest = 0;
    for (let look = 1; look <= 10 * GATE_SERIES_READINGS; look++) {
      series = addGateReadings(series, [result('errors', look)]);
      longest = Math.max(longest, series[0]!.readings.length);
    }
    const ats = series[0]!.readings.map((r) => r.at);
    expect(longest).toBe(GATE_SERIES_READINGS);
    expect(ats.length).toBeGreaterThan(GATE_SERIES_READINGS / 2);
    expect(ats[0]).toBe(1);
    expect(ats.at(-1)).toBe(10 * GATE_SERIES_READINGS);
    expect([...ats].sort((a, b) => a - b)).toEqual(ats);
  });

  it('bounds the readings of all gates together: 24 each of 10 gates, under 50 KB at their largest', () => {
    expect([1, 4, 5, 10].map(gateSeriesBound)).toEqual([60, 60, 48, 24]);
    // The largest reading: store times, unrounded ratios, a p-value, a million samples.
    const largest = (name: string, at: number): RolloutGateResult => ({
      ...result(name, 1_765_000_000_000 + at),
      value: 1 / 3 + at / 1e9,
      baseline: 2 / 3,
      samples: 1_000_000,
      baselineSamples: 1_000_000,
      limit: 0.123456789,
      pValue: 1 / 7,
    });
    const names = Array.from({ length: MAX_GATES }, (_, i) => `gate-${i}`.padEnd(64, 'x'));
    let series: RolloutGateSeries[] = [];
    let largestBytes = 0;
    for (let look = 1; look <= 100; look++) {
      series = addGateReadings(
        series,
        names.map((name) => largest(name, look)),
      );
      expect(series.every((s) => s.readings.length <= 24)).toBe(true);
      largestBytes = Math.max(largestBytes, JSON.stringify(series).length);
    }
    expect(largestBytes).toBeGreaterThan(40_000);
    expect(largestBytes).toBeLessThan(50_000);
  });

  it('answers one series per gate in the rollout order, none for another step or an older document', () => {
    const stored = addGateReadings([], [result('jobs', 5)]);
    expect(answeredGateSeries(GATES, { step: 2, gateSeries: stored }, 2)).toEqual([
      { name: 'errors', readings: [] },
      { name: 'jobs', readings: [expect.objectContaining({ at: 5 })] },
    ]);
    expect(answeredGateSeries(GATES, { step: 1, gateSeries: stored }, 2)).toEqual([
      { name: 'errors', readings: [] },
      { name: 'jobs', readings: [] },
    ]);
    expect(answeredGateSeries(GATES, { step: 2 }, 2)[1]!.readings).toEqual([]);
    expect(answeredGateSeries(GATES, null, 2)[0]!.readings).toEqual([]);
  });
});
