/**
 * `FencegateClient.rollouts`: the library's rollout commands (RolloutsApi) over the `/v1/rollouts`
 * routes, each resent only as its route's retry class allows: reads and the rollback (it only goes
 * forward) after a lost reply, a start under its rolloutId, and never a step command (advance,
 * pause, resume, promote), which sent twice could move two steps.
 */
import { randomUUID } from 'node:crypto';
import type { RolloutsApi } from '../rollout/rollouts.js';
import type {
  ListRolloutsQuery,
  Rollout,
  RolloutCommand,
  RolloutReport,
  RolloutRollbackRequest,
  StartRolloutRequest,
} from '../types.js';
import { orNull } from './or-null.js';
import { routeRequest, type ResolvedRequest } from './route-request.js';
import type {
  ListRolloutsParams,
  RolloutAnswer,
  RolloutBody,
  RolloutCommandBody,
  RolloutListAnswer,
  RolloutReportAnswer,
  RolloutRollbackBody,
} from './wire.js';

/** One request with the retries its retry class allows; the success answer's body. */
export type RouteCall = <T>(request: ResolvedRequest) => Promise<T>;

/** The routes of the commands that change a rollout's state; the rolloutId goes in the path. */
const STEP_ROUTES = {
  advance: 'advanceRollout',
  pause: 'pauseRollout',
  resume: 'resumeRollout',
  promote: 'promoteRollout',
} as const;

export class RolloutsClient implements RolloutsApi {
  readonly #call: RouteCall;

  constructor(call: RouteCall) {
    this.#call = call;
  }

  /**
   * Without a rolloutId one is generated here, before the first attempt, so a resend after a lost
   * reply is the same rollout (a start is idempotent by its rolloutId).
   */
  async start(request: StartRolloutRequest): Promise<Rollout> {
    const body: RolloutBody = { ...request, rolloutId: request.rolloutId ?? randomUUID() };
    return await this.#call<RolloutAnswer>(routeRequest('startRollout', { body }));
  }

  async get(rolloutId: string): Promise<Rollout | null> {
    return await orNull(
      this.#call<RolloutAnswer>(routeRequest('getRollout', { params: { rolloutId } })),
      'not_found',
    );
  }

  async list(query: ListRolloutsQuery = {}): Promise<Rollout[]> {
    const params: ListRolloutsParams = query;
    const answer = await this.#call<RolloutListAnswer>(
      routeRequest('listRollouts', { query: params }),
    );
    return answer.items;
  }

  advance(command: RolloutCommand): Promise<Rollout> {
    return this.#step('advance', command);
  }

  pause(command: RolloutCommand): Promise<Rollout> {
    return this.#step('pause', command);
  }

  resume(command: RolloutCommand): Promise<Rollout> {
    return this.#step('resume', command);
  }

  promote(command: RolloutCommand): Promise<Rollout> {
    return this.#step('promote', command);
  }

  async rollback(request: RolloutRollbackRequest): Promise<Rollout> {
    const { rolloutId, ...body } = request;
    return await this.#call<RolloutAnswer>(
      routeRequest('rollbackRollout', {
        params: { rolloutId },
        body: body satisfies RolloutRollbackBody,
      }),
    );
  }

  async report(rolloutId: string): Promise<RolloutReport | null> {
    return await orNull(
      this.#call<RolloutReportAnswer>(routeRequest('rolloutReport', { params: { rolloutId } })),
      'not_found',
    );
  }

  async #step(command: keyof typeof STEP_ROUTES, request: RolloutCommand): Promise<Rollout> {
    const { rolloutId, ...body } = request;
    return await this.#call<RolloutAnswer>(
      routeRequest(STEP_ROUTES[command], {
        params: { rolloutId },
        body: body satisfies RolloutCommandBody,
      }),
    );
  }
}
