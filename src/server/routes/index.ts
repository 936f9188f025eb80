/**
 * Every route file of the API. A new endpoint group is one file and one line here; a new route is
 * one entry in the route table (src/route-table.ts) and its spec in a file.
 */
import type { RouteName } from '../../route-table.js';
import { adminTokenRoutes } from './admin-tokens.js';
import { auditRoutes } from './audit.js';
import { commitRoutes } from './commit.js';
import { cutoverRoutes } from './cutovers.js';
import { rolloutRoutes } from './rollouts.js';
import { healthRoutes } from './health.js';
import { intentRoutes } from './intents.js';
import { jobRoutes } from './jobs.js';
import { leaseRoutes } from './leases.js';
import { policyRoutes } from './policies.js';
import { recordReadRoutes } from './record-reads.js';
import { recordRoutes } from './records.js';
import { scopeRoutes } from './scopes.js';

export const ROUTE_FILES = [
  leaseRoutes,
  scopeRoutes,
  recordRoutes,
  recordReadRoutes,
  commitRoutes,
  intentRoutes,
  policyRoutes,
  cutoverRoutes,
  rolloutRoutes,
  jobRoutes,
  auditRoutes,
  adminTokenRoutes,
  healthRoutes,
] as const;

/** The table entries the route files serve. */
type ServedRouteName = ReturnType<(typeof ROUTE_FILES)[number]>[number]['name'];

type UnservedRouteName = Exclude<RouteName, ServedRouteName>;

/**
 * Compiles only when every entry of the route table has a route spec here; otherwise the error
 * names the entries without one. (A spec cannot name a route that is not in the table.)
 */
export const EVERY_TABLE_ENTRY_SERVED: [UnservedRouteName] extends [never]
  ? true
  : { tableEntriesWithoutRouteSpec: UnservedRouteName } = true;
