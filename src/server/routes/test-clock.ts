/**
 * Test-only: moves the store's manual clock so lease expiry can be driven over HTTP. Registered
 * only when the server was started with a manual clock (FENCEGATE_TEST_CLOCK=manual), admin only,
 * and left out of the OpenAPI document.
 */
import type { ManualClock } from '../../testing/manual-clock.js';
import { ok, testOnlyRoute, type RouteFile } from '../route.js';
import { ClockSchema } from '../schemas/answers.js';

export function testClockRoutes(clock: ManualClock): RouteFile {
  return (s) => [
    testOnlyRoute({
      method: 'POST',
      url: '/v1/test/clock',
      auth: 'admin',
      tag: 'test',
      summary: 'Advance the manual store clock (test servers only)',
      body: s.AdvanceClockBody,
      responses: { 200: { description: 'the store time after the step', schema: ClockSchema } },
      handler: ({ body }) => Promise.resolve(ok({ now: clock.advance(body.advanceMs) })),
    }),
  ];
}
