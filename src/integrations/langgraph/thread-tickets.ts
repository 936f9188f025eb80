/**
 * Waiting in line for a thread (the `enqueue` strategy), across processes, on fencegate's own
 * leases. A waiter takes a number: it acquires the thread's queue scope, whose fence moves by one
 * on every grant, so the fence is its place in line, in the store's order; while it still holds the
 * queue scope it creates its ticket, a scope of its own named by that number, and then releases
 * the queue scope. It keeps its ticket's lease renewed while it waits. It may take the thread once
 * no ticket before its own is held: a waiter that ended released its ticket, and a waiter whose
 * process died stops renewing, so its ticket lapses and it drops out of the line.
 */
import type { FencegateApi } from '../../api.js';
import { isLive } from '../../core/lease-rules.js';
import { FencegateError, isFencegateError } from '../../errors.js';
import type { ScopeState } from '../../types.js';
import {
  acquireLease,
  sleep,
  type HeldLease,
  type LeaseRequest,
  type PolicyChoice,
} from '../lease-keeper.js';
import { keepRenewed } from './lease-renewal.js';

const PAGE = 100;
/** Wide enough for any fence a queue reaches, so name order is number order. */
const NUMBER_WIDTH = 15;

export interface TurnRequest {
  /** The thread's scope, the one the run will hold. */
  threadScope: string;
  holder: string;
  ttlMs: number;
  /** The policy the run acquires the thread under (not its place in the line). */
  policy?: PolicyChoice;
  /** How often a waiter looks at the line and at the thread. */
  pollMs: number;
  signal?: AbortSignal | undefined;
}

/** Queue scopes sit apart from thread scopes, so listing threads never meets a ticket. */
export function queueScopeOf(threadScope: string): string {
  return `multitask/${threadScope}`;
}

function ticketPrefix(threadScope: string): string {
  return `${queueScopeOf(threadScope)}/ticket/`;
}

/** Waits for the thread in arrival order and answers with the thread's lease, held. */
export async function waitForTurn(gate: FencegateApi, request: TurnRequest): Promise<HeldLease> {
  const { ticket, number } = await takeTicket(gate, request);
  const stopRenewing = keepRenewed(ticket, request.ttlMs);
  try {
    let ahead = await liveTicketsBefore(gate, request.threadScope, number);
    for (;;) {
      request.signal?.throwIfAborted();
      if (ticket.lost) {
        throw new FencegateError(
          'lease_expired',
          'the place in line for the thread lapsed while this process was not renewing it; run again to queue at the back',
          { scope: request.threadScope },
        );
      }
      if (ahead.length === 0) {
        const lease = await tryAcquire(gate, request);
        if (lease !== null) return lease;
      }
      await sleep(request.pollMs, request.signal);
      ahead = await stillLive(gate, ahead);
    }
  } finally {
    stopRenewing();
    // The ticket is done either way: the thread is ours, or this waiter gave up.
    await ticket.release().catch(() => undefined);
  }
}

async function takeTicket(
  gate: FencegateApi,
  request: TurnRequest,
): Promise<{ ticket: HeldLease; number: number }> {
  const queue: LeaseRequest = {
    scope: queueScopeOf(request.threadScope),
    holder: request.holder,
    ttlMs: request.ttlMs,
  };
  let place: HeldLease | null = null;
  while (place === null) {
    request.signal?.throwIfAborted();
    place = await acquireOrNull(gate, queue);
    if (place === null) await sleep(request.pollMs, request.signal);
  }
  try {
    const number = place.fence;
    const ticket = await acquireLease(gate, {
      scope: `${ticketPrefix(request.threadScope)}${String(number).padStart(NUMBER_WIDTH, '0')}`,
      holder: request.holder,
      ttlMs: request.ttlMs,
    });
    return { ticket, number };
  } finally {
    await place.release().catch(() => undefined);
  }
}

/** The tickets before `number` that are still held. */
async function liveTicketsBefore(
  gate: FencegateApi,
  threadScope: string,
  number: number,
): Promise<string[]> {
  const prefix = ticketPrefix(threadScope);
  const live: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await gate.listScopes({
      prefix,
      limit: PAGE,
      ...(cursor === undefined ? {} : { cursor }),
    });
    for (const scope of page.items) {
      if (Number(scope.scope.slice(prefix.length)) < number && isHeld(scope))
        live.push(scope.scope);
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return live;
}

/**
 * A ticket that was released or lapsed is never held again (its waiter stops and queues anew), so
 * once a waiter has listed the line it only looks at the tickets it saw held.
 */
async function stillLive(gate: FencegateApi, tickets: string[]): Promise<string[]> {
  const states = await Promise.all(tickets.map((scope) => gate.getScope(scope)));
  return tickets.filter((_, i) => {
    const state = states[i];
    return state !== null && state !== undefined && isHeld(state);
  });
}

function isHeld(scope: ScopeState): boolean {
  return scope.status === 'active' && isLive(scope, Date.now());
}

function tryAcquire(gate: FencegateApi, request: TurnRequest): Promise<HeldLease | null> {
  return acquireOrNull(gate, {
    scope: request.threadScope,
    holder: request.holder,
    ttlMs: request.ttlMs,
    ...request.policy,
  });
}

/** The lease, or null while another holder has the scope. */
export async function acquireOrNull(
  gate: FencegateApi,
  request: LeaseRequest,
): Promise<HeldLease | null> {
  try {
    return await acquireLease(gate, request);
  } catch (error) {
    if (isFencegateError(error) && error.code === 'lease_held') return null;
    throw error;
  }
}
