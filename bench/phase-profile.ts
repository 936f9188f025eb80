/**
 * A CPU profile of one phase of a benchmark (node:inspector, in this process), and its time
 * attributed to the code that caused it: each sample goes to the nearest frame of its stack that is
 * the project's own code (src/ or bench/), so Node's HTTP and socket internals count for the code
 * that called them. Samples with no such frame are the event loop's own work (socket reads and
 * writes, timers, promise jobs), garbage collection or idle.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface PhaseProfile {
  /** Stops profiling; writes the profile to `file` when given. */
  stop(file?: string): Promise<CpuProfile>;
}

export async function startPhaseProfile(): Promise<PhaseProfile> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return {
    async stop(file) {
      const { profile } = (await session.post('Profiler.stop')) as { profile: CpuProfile };
      session.disconnect();
      if (file !== undefined) writeFileSync(file, JSON.stringify(profile));
      return profile;
    },
  };
}

/** The owner of a project frame (a label), or null to look further up the stack. */
export type FrameOwner = (url: string, functionName: string) => string | null;

/** Microseconds of the profile by owner; `(gc)`, `(idle)` and `(event loop)` for the rest. */
export function timeByOwner(profile: CpuProfile, owner: FrameOwner): Map<string, number> {
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const ownerOf = new Map<number, string>();
  const resolve = (id: number): string => {
    const known = ownerOf.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    let label = '(event loop)';
    if (node !== undefined) {
      const { url, functionName } = node.callFrame;
      if (functionName === '(garbage collector)') label = '(gc)';
      else if (functionName === '(idle)') label = '(idle)';
      else {
        const own = /\/(src|bench)\//.test(url) ? owner(url, functionName) : null;
        const up = parent.get(id);
        label = own ?? (up === undefined ? '(event loop)' : resolve(up));
      }
    }
    ownerOf.set(id, label);
    return label;
  };
  const time = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const label = resolve(id);
    time.set(label, (time.get(label) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return time;
}
