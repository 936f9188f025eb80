/**
 * What the dashboard reads, and nothing else: a slice of the public API (FencegateApi,
 * FencegateOpsApi and the reading half of `rollouts`), which the library bound to the signed-in
 * tenant and FencegateClient (what the CLI and every HTTP caller use) both implement. The
 * dashboard is read-only by construction.
 */
import type { FencegateApi, FencegateOpsApi } from '../../api.js';
import type { RolloutsApi } from '../../rollout/rollouts.js';

export type DashboardApi = Pick<
  FencegateApi,
  'listScopes' | 'getScope' | 'listRecordsPage' | 'getRecord' | 'listIntents' | 'audit'
> &
  Pick<FencegateOpsApi, 'listCutovers' | 'cutoverReport' | 'listPolicies'> & {
    readonly rollouts: Pick<RolloutsApi, 'list' | 'report'>;
  };
