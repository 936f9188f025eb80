/**
 * Commits and rejected commits per minute, by reason, for one tenant: counted from the tenant's
 * audit log (GET /v1/audit), read incrementally. Each refresh reads only the entries appended since
 * the previous one, at most MAX_PAGES pages, so a long history is caught up over a few refreshes
 * instead of in one long request. Only the last WINDOW_MINUTES minutes are kept.
 */
import type { AuditEntry } from '../../types.js';
import type { DashboardApi } from './dashboard-api.js';

export const WINDOW_MINUTES = 10;
const MINUTE_MS = 60_000;
const PAGE_SIZE = 1000;
const MAX_PAGES = 20;

export interface MinuteCounts {
  /** Start of the minute, store time. */
  minute: number;
  committed: number;
  /** Rejected commits by rejection code (stale_fence, not_holder, stale_revision, …). */
  rejected: Record<string, number>;
}

export interface ActivityView {
  /** Newest minute first; minutes without commits are included, with zeros. */
  minutes: MinuteCounts[];
  /** Every reason seen in the window, sorted. */
  reasons: string[];
  /** false while older history is still being read. */
  caughtUp: boolean;
}

export class ActivityCounter {
  #afterSeq = 0;
  #caughtUp = false;
  readonly #minutes = new Map<number, MinuteCounts>();
  /** Refreshes of one tenant run one at a time, so no entry is counted twice. */
  #running: Promise<unknown> = Promise.resolve();

  refresh(api: DashboardApi, now: number): Promise<ActivityView> {
    const next = this.#running.then(() => this.#read(api, now));
    this.#running = next.catch(() => undefined);
    return next;
  }

  async #read(api: DashboardApi, now: number): Promise<ActivityView> {
    const oldest = Math.floor(now / MINUTE_MS) * MINUTE_MS - (WINDOW_MINUTES - 1) * MINUTE_MS;
    this.#caughtUp = false;
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await api.audit({
        kind: 'commit',
        afterSeq: this.#afterSeq,
        limit: PAGE_SIZE,
      });
      for (const entry of answer.items) this.#count(entry, oldest);
      const last = answer.items.at(-1);
      if (last !== undefined) this.#afterSeq = last.seq;
      if (answer.nextAfterSeq === null) {
        this.#caughtUp = true;
        break;
      }
      this.#afterSeq = answer.nextAfterSeq;
    }
    for (const minute of this.#minutes.keys()) if (minute < oldest) this.#minutes.delete(minute);
    return this.#view(oldest);
  }

  #count(entry: AuditEntry, oldest: number): void {
    if (entry.at < oldest) return;
    const minute = Math.floor(entry.at / MINUTE_MS) * MINUTE_MS;
    let counts = this.#minutes.get(minute);
    if (counts === undefined) {
      counts = { minute, committed: 0, rejected: {} };
      this.#minutes.set(minute, counts);
    }
    if (entry.outcome === 'committed') counts.committed += 1;
    else if (entry.outcome === 'rejected') {
      const reason = entry.reason ?? 'unknown';
      counts.rejected[reason] = (counts.rejected[reason] ?? 0) + 1;
    }
  }

  #view(oldest: number): ActivityView {
    const minutes: MinuteCounts[] = [];
    const reasons = new Set<string>();
    for (let i = WINDOW_MINUTES - 1; i >= 0; i--) {
      const minute = oldest + i * MINUTE_MS;
      const counts = this.#minutes.get(minute) ?? { minute, committed: 0, rejected: {} };
      for (const reason of Object.keys(counts.rejected)) reasons.add(reason);
      minutes.push({ ...counts, rejected: { ...counts.rejected } });
    }
    return { minutes, reasons: [...reasons].sort(), caughtUp: this.#caughtUp };
  }
}

/** One counter per tenant, shared by its sessions; the least recently used go beyond `max`. */
export class ActivityCounters {
  readonly #byTenant = new Map<string, ActivityCounter>();

  constructor(private readonly max = 1000) {}

  forTenant(tenant: string): ActivityCounter {
    let counter = this.#byTenant.get(tenant);
    if (counter !== undefined) this.#byTenant.delete(tenant);
    else counter = new ActivityCounter();
    this.#byTenant.set(tenant, counter);
    if (this.#byTenant.size > this.max) {
      const oldest = this.#byTenant.keys().next();
      if (oldest.done !== true) this.#byTenant.delete(oldest.value);
    }
    return counter;
  }
}
