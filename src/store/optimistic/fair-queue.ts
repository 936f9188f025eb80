/**
 * The waiting writes of a group-commit batcher, by tenant, admitted into batches by deficit
 * round-robin: each tenant with writes waiting gets a turn in rotation, and a turn admits up to
 * its deficit (the quantum it gained this turn plus what it did not use before) of its writes,
 * oldest first. A tenant with a deep queue therefore gets its quantum per turn, never the whole
 * batch while another tenant waits: another tenant's single write is admitted within one
 * rotation. Writes of one tenant keep their order (a write put back goes to the front of its
 * tenant's queue), which the distinct-key rule relies on. Writes sent together (one commitMany's
 * commits) are a group, which a batch takes whole when it has room for it: a batch ends before a
 * group that would not fit the rest of it, and the next batch starts with the group.
 */
export interface TenantJob {
  tenant: string;
  /** The same object for writes sent together; absent for a write sent on its own. */
  group?: object;
}

/**
 * How deep a batcher's queue is, without naming tenants (metrics never carry them): the writes
 * waiting, the tenants they belong to, and the deepest single tenant's share.
 */
export interface QueueDepths {
  waiting: number;
  tenants: number;
  deepestTenant: number;
}

export class FairQueue<J extends TenantJob> {
  /** Per tenant, oldest first; the map's order is the rotation (a tenant served goes last). */
  readonly #tenants = new Map<string, J[]>();
  readonly #deficit = new Map<string, number>();
  #size = 0;

  /** `quantum`: the writes a tenant gains per turn (at least 1). */
  constructor(private readonly quantum: number) {}

  get size(): number {
    return this.#size;
  }

  depths(): QueueDepths {
    let deepestTenant = 0;
    for (const queue of this.#tenants.values())
      deepestTenant = Math.max(deepestTenant, queue.length);
    return { waiting: this.#size, tenants: this.#tenants.size, deepestTenant };
  }

  push(job: J): void {
    this.#queueOf(job.tenant).push(job);
    this.#size += 1;
  }

  /** Puts writes back ahead of their tenant's waiting ones, in the order given. */
  pushFront(jobs: readonly J[]): void {
    for (let i = jobs.length - 1; i >= 0; i -= 1) {
      const job = jobs[i] as J;
      this.#queueOf(job.tenant).unshift(job);
      this.#size += 1;
    }
  }

  /**
   * The next batch: up to `max` writes, admitted turn by turn. With `oneTenant`, the batch is the
   * next tenant's turn alone (a store that applies one tenant per statement); otherwise turns
   * continue round the rotation until the batch is full or nothing waits. A turn stops before a
   * group it has no room for; a group larger than a whole turn of an empty batch is split.
   */
  take(max: number, oneTenant: boolean): J[] {
    const batch: J[] = [];
    while (batch.length < max && this.#size > 0) {
      const [tenant, queue] = this.#tenants.entries().next().value as [string, J[]];
      const deficit = (this.#deficit.get(tenant) ?? 0) + Math.max(1, this.quantum);
      const room = Math.min(deficit, max - batch.length);
      const whole = uncut(queue, room);
      // The tenant keeps its place and credit: the next batch starts with its group.
      if (whole === 0 && batch.length > 0) break;
      const admitted = queue.splice(0, whole > 0 ? whole : room);
      batch.push(...admitted);
      this.#size -= admitted.length;
      this.#tenants.delete(tenant);
      if (queue.length === 0) {
        // An idle tenant keeps no credit: DRR's deficit resets when its queue empties.
        this.#deficit.delete(tenant);
      } else {
        this.#deficit.set(tenant, deficit - admitted.length);
        this.#tenants.set(tenant, queue);
      }
      if (oneTenant) break;
    }
    return batch;
  }

  #queueOf(tenant: string): J[] {
    let queue = this.#tenants.get(tenant);
    if (queue === undefined) {
      queue = [];
      this.#tenants.set(tenant, queue);
    }
    return queue;
  }
}

/** How many of the first `room` writes of `queue` a batch may take without splitting a group. */
function uncut(queue: readonly TenantJob[], room: number): number {
  const group = queue[room]?.group;
  if (group === undefined) return room;
  let end = room;
  while (end > 0 && queue[end - 1]?.group === group) end -= 1;
  return end;
}
