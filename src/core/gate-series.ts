/**
 * Each gate's readings over the step the driver looks at (docs/rollout.md, "The driver"), kept in
 * the driver's document beside the last readings and written by the same write: the dashboard
 * draws them as the gate's line over the rollout's time.
 *
 * The series are bounded so the document, rewritten at every look (and kept by etcd in its history
 * until compaction), stays small: at most GATE_SERIES_READINGS readings per gate and
 * GATE_READINGS_IN_ALL over all the rollout's gates, so 24 each with the 10 gates a rollout may
 * have; a reading is 130 to 200 bytes of JSON, so the series stay under 50 KB. A full series drops
 * every other reading, its first kept, before it takes the next: it always spans the step from its
 * first look to its latest, at a coarser spacing as the hold goes on, rather than only the last
 * minute of a long hold.
 */
import type {
  RolloutGate,
  RolloutGateReading,
  RolloutGateResult,
  RolloutGateSeries,
} from '../types.js';

export const GATE_SERIES_READINGS = 60;
export const GATE_READINGS_IN_ALL = 240;

/** How many readings each of a rollout's `gates` gates keeps. */
export function gateSeriesBound(gates: number): number {
  return Math.min(GATE_SERIES_READINGS, Math.floor(GATE_READINGS_IN_ALL / Math.max(gates, 1)));
}

/**
 * The series once a look's readings (one per gate of the rollout) are added to those of the same
 * step (`previous`; none for a new step): one series per reading, in the readings' order.
 */
export function addGateReadings(
  previous: readonly RolloutGateSeries[],
  results: readonly RolloutGateResult[],
): RolloutGateSeries[] {
  const bound = gateSeriesBound(results.length);
  return results.map(({ name, ...reading }) => {
    const before = previous.find((series) => series.name === name)?.readings ?? [];
    return { name, readings: [...thinned(before, bound), reading] };
  });
}

/** A full series halved until it has room for one more, its first reading kept. */
function thinned(
  readings: readonly RolloutGateReading[],
  bound: number,
): readonly RolloutGateReading[] {
  let kept = readings;
  while (kept.length >= bound && kept.length > 1) kept = kept.filter((_, i) => i % 2 === 0);
  return kept;
}

export function answeredGateSeries(
  gates: readonly RolloutGate[],
  stored: { step: number; gateSeries?: RolloutGateSeries[] } | null,
  step: number,
): RolloutGateSeries[] {
  const current = stored !== null && stored.step === step ? (stored.gateSeries ?? []) : [];
  return gates.map(({ name }) => ({
    name,
    readings: current.find((series) => series.name === name)?.readings ?? [],
  }));
}
