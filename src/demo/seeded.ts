/**
 * Deterministic randomness for the incident demo: the same seed always replays the same incident
 * (which workflows are affected, which facts version 7 drops), so a failing run can be repeated.
 */
export type Random = () => number;

/** mulberry32: small, fast and good enough to pick workflows and facts; not for secrets. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One seed from several numbers, so each workflow has its own stream independent of the others. */
export function mixSeed(...parts: number[]): number {
  let hash = 0x811c9dc5;
  for (const part of parts) {
    hash = Math.imul(hash ^ (part >>> 0), 0x01000193) >>> 0;
    hash = Math.imul(hash ^ (hash >>> 13), 0x5bd1e995) >>> 0;
  }
  return hash;
}

/** `count` distinct integers from 0..size-1 in a seeded order (a partial Fisher-Yates shuffle). */
export function sample(size: number, count: number, random: Random): number[] {
  const pool = Int32Array.from({ length: size }, (_, i) => i);
  const picked: number[] = [];
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(random() * (size - i));
    const chosen = pool[j]!;
    pool[j] = pool[i]!;
    pool[i] = chosen;
    picked.push(chosen);
  }
  return picked;
}
