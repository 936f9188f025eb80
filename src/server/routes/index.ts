/** Every route file of the API. A new endpoint group is one file and one line here. */
import type { RouteFile } from '../route.js';
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

export const ROUTE_FILES: readonly RouteFile[] = [
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
];
