/**
 * The figures of the dashboard's summary strip, the operator's first question ("is anything
 * wrong?"): verify violations, stale commits accepted by the latest cutover, intents whose
 * outcome is unknown or that need attention, and commits rejected in the last 10 minutes.
 */
import type { IntentStatus } from '../../types.js';
import type { ActivityView } from './activity.js';
import type { DashboardApi } from './dashboard-api.js';

/** Intents counted up to this many; more reads as "100+". */
const COUNTED_INTENTS = 100;
export const RECENT_MINUTES = 10;

export interface SummaryFigures {
  violations: number;
  staleAccepted: number;
  /** A count, or the count of the first page and `+` when more follow. */
  unknownIntents: string;
  needsAttention: string;
  rejectedRecently: number;
}

export async function summaryFigures(
  api: DashboardApi,
  activity: ActivityView,
  violations: number,
  now: number,
): Promise<SummaryFigures> {
  const [unknownIntents, needsAttention, staleAccepted] = await Promise.all([
    countIntents(api, 'unknown'),
    countIntents(api, 'needs_attention'),
    latestStaleAccepted(api),
  ]);
  const since = now - RECENT_MINUTES * 60_000;
  const rejectedRecently = activity.minutes
    .filter((minute) => minute.minute + 60_000 > since)
    .reduce((sum, minute) => sum + Object.values(minute.rejected).reduce((a, b) => a + b, 0), 0);
  return { violations, staleAccepted, unknownIntents, needsAttention, rejectedRecently };
}

async function countIntents(api: DashboardApi, status: IntentStatus): Promise<string> {
  const page = await api.listIntents({ status, limit: COUNTED_INTENTS });
  // A page the byte budget cut short holds fewer than asked: count what it holds.
  return page.nextCursor === null ? String(page.items.length) : `${page.items.length}+`;
}

async function latestStaleAccepted(api: DashboardApi): Promise<number> {
  const latest = (await api.listCutovers({ limit: 1 })).items[0];
  if (latest === undefined) return 0;
  return (await api.cutoverReport(latest.cutoverId))?.staleAccepted ?? 0;
}
