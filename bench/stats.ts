/** Latency and throughput summaries shared by the benchmarks. */
export interface RunStats {
  ops: number;
  seconds: number;
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

export function summarize(latenciesNs: number[], elapsedNs: number): RunStats {
  const sorted = Float64Array.from(latenciesNs).sort();
  const pick = (q: number): number =>
    (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) / 1e6;
  const seconds = elapsedNs / 1e9;
  return {
    ops: latenciesNs.length,
    seconds,
    opsPerSec: latenciesNs.length / seconds,
    p50Ms: pick(0.5),
    p99Ms: pick(0.99),
  };
}

export function formatStats(label: string, stats: RunStats): string {
  return `${label.padEnd(44)} ${stats.opsPerSec.toFixed(0).padStart(8)} ops/s   p50 ${stats.p50Ms.toFixed(3)} ms   p99 ${stats.p99Ms.toFixed(3)} ms`;
}

/** Runs `op` back to back for `seconds`, one at a time. */
export async function runSequential(
  seconds: number,
  op: (i: number) => unknown,
): Promise<RunStats> {
  const latencies: number[] = [];
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(seconds * 1e9));
  let now = start;
  for (let i = 0; now < end; i++) {
    const t0 = now;
    await op(i);
    now = process.hrtime.bigint();
    latencies.push(Number(now - t0));
  }
  return summarize(latencies, Number(now - start));
}

/** Keeps `inFlight` calls of `op` running for `seconds`. */
export async function runConcurrent(
  seconds: number,
  inFlight: number,
  op: (i: number) => Promise<unknown>,
): Promise<RunStats> {
  const latencies: number[] = [];
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(seconds * 1e9));
  let counter = 0;
  const lane = async (): Promise<void> => {
    while (process.hrtime.bigint() < end) {
      const t0 = process.hrtime.bigint();
      await op(counter++);
      latencies.push(Number(process.hrtime.bigint() - t0));
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return summarize(latencies, Number(process.hrtime.bigint() - start));
}

/** The median of `values` (the upper one of an even count); 0 for none. */
export function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}
