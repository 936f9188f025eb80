"""What ``Client`` and ``AsyncClient`` both hold: the server's address, the token and the limits
of one exchange, and the routes of the API that their methods call."""

import numbers
from typing import Dict

from ._endpoint import Endpoint
from ._rate_limit import DEFAULT_RATE_LIMIT_WAIT_S
from ._wire import MAX_ANSWER_BYTES, MAX_BODY_BYTES


class ClientBase:
    """A worker, operator or admin token of one tenant, and the server it talks to."""

    #: Every call of the HTTP API: the method that makes it, and the name of its route in the
    #: route table (_route_table.py), which gives its method, path and retry class. Each method is
    #: a function of _api.py; scripts/write_client_methods.py writes both clients' methods from
    #: those functions, in this order.
    ROUTES: Dict[str, str] = {
        "acquire": "acquire",
        "renew": "renew",
        "release": "release",
        "cancel_intents": "cancelIntents",
        "get_scope": "getScope",
        "list_scopes": "listScopes",
        "takeover": "takeover",
        "cancel": "cancel",
        "delete_scope": "deleteScope",
        "get_record": "getRecord",
        "list_records": "listRecords",
        "list_records_page": "listRecords",
        "read_records": "readRecords",
        "commit": "commit",
        "commit_many": "commitMany",
        "get_operation": "getOperation",
        "abandon_operation": "abandonOperation",
        "list_intents": "listIntents",
        "get_intent": "getIntent",
        "claim_intents": "claimIntents",
        "complete_intent": "completeIntent",
        "register_policy": "registerPolicy",
        "list_policies": "listPolicies",
        "cutover": "cutover",
        "list_cutovers": "listCutovers",
        "cutover_report": "cutoverReport",
        "start_rollout": "startRollout",
        "list_rollouts": "listRollouts",
        "get_rollout": "getRollout",
        "advance_rollout": "advanceRollout",
        "pause_rollout": "pauseRollout",
        "resume_rollout": "resumeRollout",
        "promote_rollout": "promoteRollout",
        "rollback_rollout": "rollbackRollout",
        "rollout_report": "rolloutReport",
        "record_job_events": "recordJobEvents",
        "audit": "audit",
        "verify": "verify",
        "create_token": "createToken",
        "list_tokens": "listTokens",
        "revoke_token": "deleteToken",
        "healthz": "healthz",
        "readyz": "readyz",
        "metrics": "metrics",
        "openapi": "openapi",
    }

    def __init__(
        self,
        base_url: str,
        token: str,
        timeout: float = 10.0,
        retries: int = 3,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
        rate_limit_wait: float = DEFAULT_RATE_LIMIT_WAIT_S,
        max_body_bytes: int = MAX_BODY_BYTES,
    ) -> None:
        """``timeout``: the most seconds one exchange with the server takes, connecting and
        answering together; ``retries``: extra attempts where allowed; ``max_answer_bytes``: the
        longest answer body read (a longer one is an error, not read to its end);
        ``rate_limit_wait``: the most seconds one exchange takes, from its first send, while it
        is rate limited (a 429: nothing changed, sent again when the answer says), after which
        the call fails ``RateLimitedError``; a commit is never abandoned because of it;
        ``max_body_bytes``: the server's body limit (default 1 MiB, the server's own), which the
        commits sent together (``commit_many``, coalesced commits) are split to stay within."""
        self.base_url = base_url.rstrip("/")
        self._token = token
        self.timeout = timeout
        self.retries = retries
        self.max_answer_bytes = max_answer_bytes
        self.rate_limit_wait = _require_range("rate_limit_wait", rate_limit_wait, 0.0, float(2**53))
        self.max_body_bytes = int(
            _require_range(
                "max_body_bytes", max_body_bytes, MIN_BODY_BYTES, MAX_ANSWER_BYTES, whole=True
            )
        )
        self._endpoint = Endpoint(self.base_url)


#: The smallest body limit a client takes: below it no commit with a record would fit.
MIN_BODY_BYTES = 1024


def _require_range(name: str, value: float, low: float, high: float, whole: bool = False) -> float:
    """A client option that must be a number within bounds, checked when the client is made:
    NaN or a value out of range would otherwise surface later as a client that never stops
    waiting, or that sends each commit of a batch alone."""
    number = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if not number or not low <= value <= high or (whole and value != int(value)):
        kind = "a whole number" if whole else "a finite number"
        raise ValueError(f"{name} must be {kind} from {low:,.0f} to {high:,.0f}, not {value!r}")
    return value
