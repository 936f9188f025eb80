/** The jobs ledger: queues and workers report job lifecycle events (worker endpoint). */
import { validateJobEvents } from '../../core/validate-ops.js';
import { ok, route, routeFile } from '../route.js';
import { JobEventsAcceptedSchema } from '../schemas/answers.js';

export const jobRoutes = routeFile((s) => [
  route({
    name: 'recordJobEvents',
    tag: 'jobs',
    summary:
      'Record job lifecycle events; each job keeps its latest state (an event older than the stored one is ignored)',
    body: s.JobEventsBody,
    explain: { body: (value) => validateJobEvents(value) },
    responses: { 202: { description: 'recorded', schema: JobEventsAcceptedSchema } },
    handler: async ({ body }, ctx) => {
      await ctx.tenantApi().recordJobEvents(body.events);
      return ok({ accepted: body.events.length }, 202);
    },
  }),
]);
