/**
 * Deterministic randomness for the incident demo: the same seed always replays the same incident
 * (which workflows are affected, which facts version 7 drops), so a failing run can be repeated.
 */
import type { Random } from '../core/seeded-random.js';

export { seededRandom, type Random } from '../core/seeded-random.js';

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
