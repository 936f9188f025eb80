/**
 * How a rollout's gate decides (docs/rollout.md, "How a gate decides"), from counts the driver read
 * from the store: the new version's samples and failures over the step's hold, and the baseline's
 * (the old version on scopes not moved, same window).
 *
 * - Too few samples: `pending`, never `pass`.
 * - An absolute limit (`max`) and any verify violation fail as soon as the samples are in, at any
 *   look during the hold; they pass only at the hold's end.
 * - `maxRatio` and `confidence` compare with the baseline and are decided only at the hold's end
 *   (the first look at or after it) and, when the hold was extended for lack of samples, at the
 *   extension's end: never at a look in between. Looking again and again at a significance test
 *   and stopping at the first "worse" would fail good versions far more often than the stated
 *   confidence says.
 * - `confidence`: a one-sided Fisher exact test on the 2×2 table (failures / other, new / baseline):
 *   exact at the small counts a gate may decide on, where a z-test's normal approximation is not.
 */
import type { RolloutGate, RolloutGateResult } from '../types.js';

export interface GateCounts {
  samples: number;
  failures: number;
  baselineSamples: number;
  baselineFailures: number;
  /** For an external metric: the last value read (null when the source did not answer). */
  reading?: number | null;
}

/**
 * Where a look falls. `during`: inside the hold. `end`: a decision point, the hold's end (its first
 * look at or after it) or the extension's end (any look at or after it). `extension`: a look of
 * the extension in between, where only the absolute limits decide.
 */
export type GatePhase = 'during' | 'end' | 'extension';

export interface LookTimes {
  now: number;
  /** When the step's hold ends, store time. */
  holdEnd: number;
  /** When the hold's extension ends: the hold's end when there is none. */
  extensionEnd: number;
  /** The previous look at this step (its recorded gate readings), or null when none was. */
  lastLookAt: number | null;
}

/**
 * The phase of a look, from the store's times alone: the hold's end is the first look at or after
 * it, so a driver that takes over mid-extension reads it from the looks recorded before.
 */
export function lookPhase({ now, holdEnd, extensionEnd, lastLookAt }: LookTimes): GatePhase {
  if (now < holdEnd) return 'during';
  if (now >= extensionEnd) return 'end';
  return lastLookAt === null || lastLookAt < holdEnd ? 'end' : 'extension';
}

/**
 * An external metric's counts at this look: its samples are the step's looks that got a reading,
 * this one included, counted on from the previous look's result at the same step (`previous`,
 * null at the step's first look). A source answers one value per look, so its `minSamples` is a
 * number of readings over the hold, never reached by one look alone.
 */
export function externalCounts(
  reading: number | null,
  previous: RolloutGateResult | null,
): GateCounts {
  const earlier = previous?.samples ?? 0;
  return {
    samples: earlier + (reading === null ? 0 : 1),
    failures: 0,
    baselineSamples: 0,
    baselineFailures: 0,
    reading,
  };
}

export function decideGate(
  gate: RolloutGate,
  counts: GateCounts,
  phase: GatePhase,
  at: number,
): RolloutGateResult {
  const baseline =
    gate.metric === 'external' || counts.baselineSamples === 0
      ? null
      : counts.baselineFailures / counts.baselineSamples;
  const value =
    gate.metric === 'external'
      ? (counts.reading ?? null)
      : counts.samples === 0
        ? null
        : gate.metric === 'verify_violations'
          ? counts.failures
          : counts.failures / counts.samples;
  const result: RolloutGateResult = {
    name: gate.name,
    verdict: 'pending',
    value,
    baseline,
    samples: counts.samples,
    baselineSamples: counts.baselineSamples,
    limit: null,
    pValue: null,
    at,
  };
  // No evidence, no decision: a gate with too few samples (or no reading) stays pending.
  if (counts.samples < gate.minSamples || value === null) return result;
  if (gate.metric === 'verify_violations') {
    result.limit = 0;
    if (counts.failures > 0) return { ...result, verdict: 'fail' };
    return phase === 'during' ? result : { ...result, verdict: 'pass' };
  }
  if (gate.max !== undefined) {
    result.limit = gate.max;
    if (value > gate.max) return { ...result, verdict: 'fail' };
    // An absolute limit met with the samples in passes at any look from the hold's end on.
    return phase === 'during' ? result : { ...result, verdict: 'pass' };
  }
  // Comparisons with the baseline decide only at the hold's or the extension's end.
  if (phase !== 'end') return result;
  // The comparisons with the baseline need the baseline's samples too.
  if (counts.baselineSamples < gate.minSamples || baseline === null) return result;
  if (gate.maxRatio !== undefined) {
    result.limit = gate.maxRatio * baseline;
    return { ...result, verdict: value > result.limit ? 'fail' : 'pass' };
  }
  const pValue = fisherWorse(counts);
  result.pValue = pValue;
  return { ...result, verdict: pValue < 1 - (gate.confidence ?? 0.95) ? 'fail' : 'pass' };
}

/**
 * One-sided Fisher exact p-value that the new version's failure share is no higher than the
 * baseline's: the probability, with the margins fixed, of at least as many failures among the new
 * version's samples as were seen.
 */
export function fisherWorse(counts: GateCounts): number {
  const n1 = counts.samples;
  const n2 = counts.baselineSamples;
  const failures = counts.failures + counts.baselineFailures;
  const total = n1 + n2;
  const highest = Math.min(n1, failures);
  const denominator = logChoose(total, n1);
  let p = 0;
  for (let x = counts.failures; x <= highest; x += 1) {
    p += Math.exp(logChoose(failures, x) + logChoose(total - failures, n1 - x) - denominator);
  }
  return Math.min(1, p);
}

function logChoose(n: number, k: number): number {
  if (k < 0 || k > n) return -Infinity;
  return logFactorial(n) - logFactorial(k) - logFactorial(n - k);
}

/** ln(n!), exact by sum for small n, by Stirling's series beyond (error below 1e-10). */
function logFactorial(n: number): number {
  if (n < 64) {
    let sum = 0;
    for (let i = 2; i <= n; i += 1) sum += Math.log(i);
    return sum;
  }
  const x = n + 1;
  return (
    (x - 0.5) * Math.log(x) -
    x +
    0.5 * Math.log(2 * Math.PI) +
    1 / (12 * x) -
    1 / (360 * x ** 3) +
    1 / (1260 * x ** 5)
  );
}
