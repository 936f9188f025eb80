"""The HTTP routes of the fencegate server, and the refusals that mean authority is gone.

Generated from src/route-table.ts and src/errors.ts by scripts/write_route_table.py; do not edit.
Each API call of _api.py takes its method, path and retry class from here by route name.
"""

from typing import FrozenSet, Mapping, NamedTuple, Tuple


class Route(NamedTuple):
    """One route; ``path`` has a ``:param`` segment for each of ``params``."""

    method: str
    path: str
    #: Who may call it: public, worker, operator or admin.
    auth: str
    #: What a client may do after its reply was lost (docs/http.md, "Retry classes").
    retry: str
    params: Tuple[str, ...]


#: Every route by its name in the table, in the table's order.
ROUTES: Mapping[str, Route] = {
    "acquire": Route(
        method="POST",
        path="/v1/leases/acquire",
        auth="worker",
        retry="lease",
        params=(),
    ),
    "renew": Route(
        method="POST",
        path="/v1/leases/renew",
        auth="worker",
        retry="lease",
        params=(),
    ),
    "release": Route(
        method="POST",
        path="/v1/leases/release",
        auth="worker",
        retry="lease",
        params=(),
    ),
    "cancelIntents": Route(
        method="POST",
        path="/v1/leases/cancel-intents",
        auth="worker",
        retry="idempotent",
        params=(),
    ),
    "getScope": Route(
        method="GET",
        path="/v1/scopes/:scope",
        auth="worker",
        retry="read",
        params=("scope",),
    ),
    "listScopes": Route(
        method="GET",
        path="/v1/scopes",
        auth="worker",
        retry="read",
        params=(),
    ),
    "takeover": Route(
        method="POST",
        path="/v1/scopes/:scope/takeover",
        auth="operator",
        retry="lease",
        params=("scope",),
    ),
    "cancel": Route(
        method="POST",
        path="/v1/scopes/:scope/cancel",
        auth="operator",
        retry="lease",
        params=("scope",),
    ),
    "deleteScope": Route(
        method="DELETE",
        path="/v1/scopes/:scope",
        auth="operator",
        retry="lease",
        params=("scope",),
    ),
    "getRecord": Route(
        method="GET",
        path="/v1/scopes/:scope/records/:name",
        auth="worker",
        retry="read",
        params=("scope", "name"),
    ),
    "listRecords": Route(
        method="GET",
        path="/v1/scopes/:scope/records",
        auth="worker",
        retry="read",
        params=("scope",),
    ),
    "readRecords": Route(
        method="POST",
        path="/v1/scopes/:scope/reads",
        auth="worker",
        retry="read",
        params=("scope",),
    ),
    "commit": Route(
        method="POST",
        path="/v1/commit",
        auth="worker",
        retry="commit",
        params=(),
    ),
    "commitMany": Route(
        method="POST",
        path="/v1/commits",
        auth="worker",
        retry="idempotent",
        params=(),
    ),
    "getOperation": Route(
        method="GET",
        path="/v1/operations/:operationId",
        auth="worker",
        retry="read",
        params=("operationId",),
    ),
    "abandonOperation": Route(
        method="POST",
        path="/v1/operations/:operationId/abandon",
        auth="worker",
        retry="idempotent",
        params=("operationId",),
    ),
    "listIntents": Route(
        method="GET",
        path="/v1/intents",
        auth="worker",
        retry="read",
        params=(),
    ),
    "getIntent": Route(
        method="GET",
        path="/v1/intents/:effectKey",
        auth="worker",
        retry="read",
        params=("effectKey",),
    ),
    "claimIntents": Route(
        method="POST",
        path="/v1/intents/claim",
        auth="worker",
        retry="none",
        params=(),
    ),
    "completeIntent": Route(
        method="POST",
        path="/v1/intents/:effectKey/complete",
        auth="worker",
        retry="idempotent",
        params=("effectKey",),
    ),
    "registerPolicy": Route(
        method="POST",
        path="/v1/policies",
        auth="operator",
        retry="idempotent",
        params=(),
    ),
    "listPolicies": Route(
        method="GET",
        path="/v1/policies",
        auth="operator",
        retry="read",
        params=(),
    ),
    "cutover": Route(
        method="POST",
        path="/v1/cutovers",
        auth="operator",
        retry="idempotent",
        params=(),
    ),
    "listCutovers": Route(
        method="GET",
        path="/v1/cutovers",
        auth="operator",
        retry="read",
        params=(),
    ),
    "cutoverReport": Route(
        method="GET",
        path="/v1/cutovers/:cutoverId/report",
        auth="operator",
        retry="read",
        params=("cutoverId",),
    ),
    "startRollout": Route(
        method="POST",
        path="/v1/rollouts",
        auth="operator",
        retry="idempotent",
        params=(),
    ),
    "listRollouts": Route(
        method="GET",
        path="/v1/rollouts",
        auth="operator",
        retry="read",
        params=(),
    ),
    "getRollout": Route(
        method="GET",
        path="/v1/rollouts/:rolloutId",
        auth="operator",
        retry="read",
        params=("rolloutId",),
    ),
    "advanceRollout": Route(
        method="POST",
        path="/v1/rollouts/:rolloutId/advance",
        auth="operator",
        retry="none",
        params=("rolloutId",),
    ),
    "pauseRollout": Route(
        method="POST",
        path="/v1/rollouts/:rolloutId/pause",
        auth="operator",
        retry="none",
        params=("rolloutId",),
    ),
    "resumeRollout": Route(
        method="POST",
        path="/v1/rollouts/:rolloutId/resume",
        auth="operator",
        retry="none",
        params=("rolloutId",),
    ),
    "promoteRollout": Route(
        method="POST",
        path="/v1/rollouts/:rolloutId/promote",
        auth="operator",
        retry="none",
        params=("rolloutId",),
    ),
    "rollbackRollout": Route(
        method="POST",
        path="/v1/rollouts/:rolloutId/rollback",
        auth="operator",
        retry="idempotent",
        params=("rolloutId",),
    ),
    "rolloutReport": Route(
        method="GET",
        path="/v1/rollouts/:rolloutId/report",
        auth="operator",
        retry="read",
        params=("rolloutId",),
    ),
    "recordJobEvents": Route(
        method="POST",
        path="/v1/jobs/events",
        auth="worker",
        retry="idempotent-when-timed",
        params=(),
    ),
    "audit": Route(
        method="GET",
        path="/v1/audit",
        auth="operator",
        retry="read",
        params=(),
    ),
    "verify": Route(
        method="GET",
        path="/v1/verify",
        auth="operator",
        retry="read",
        params=(),
    ),
    "createToken": Route(
        method="POST",
        path="/v1/admin/tokens",
        auth="admin",
        retry="none",
        params=(),
    ),
    "listTokens": Route(
        method="GET",
        path="/v1/admin/tokens",
        auth="admin",
        retry="read",
        params=(),
    ),
    "deleteToken": Route(
        method="DELETE",
        path="/v1/admin/tokens/:id",
        auth="admin",
        retry="idempotent",
        params=("id",),
    ),
    "healthz": Route(
        method="GET",
        path="/healthz",
        auth="public",
        retry="read",
        params=(),
    ),
    "readyz": Route(
        method="GET",
        path="/readyz",
        auth="public",
        retry="read",
        params=(),
    ),
    "metrics": Route(
        method="GET",
        path="/metrics",
        auth="public",
        retry="read",
        params=(),
    ),
    "openapi": Route(
        method="GET",
        path="/openapi.json",
        auth="public",
        retry="read",
        params=(),
    ),
}

#: The retry classes, as docs/http.md describes them.
RETRY_CLASSES: Tuple[str, ...] = (
    "read",
    "idempotent",
    "idempotent-when-timed",
    "commit",
    "lease",
    "none",
)

#: The refusals of a renewal that mean the lease is gone for good.
RENEWAL_LEASE_LOST_CODES: FrozenSet[str] = frozenset(
    {
        "stale_fence",
        "not_holder",
        "scope_deleted",
        "scope_not_found",
    }
)

#: The rejections of a commit that mean the writer holds no authority over its scope.
COMMIT_AUTHORITY_LOST_CODES: FrozenSet[str] = frozenset(
    {
        "scope_not_found",
        "scope_deleted",
        "stale_fence",
        "authority_revoked",
        "lease_expired",
    }
)
