"""What ``Client`` and ``AsyncClient`` both hold: the server's address, the token and the limits
of one exchange, and the routes of the API that their methods call."""

from typing import Dict, Tuple

from ._endpoint import Endpoint
from ._wire import MAX_ANSWER_BYTES


class ClientBase:
    """A worker, operator or admin token of one tenant, and the server it talks to."""

    #: Every route of the HTTP API, by the method that calls it (paths as in /openapi.json). Each
    #: method is a function of _api.py; scripts/write_client_methods.py writes both clients'
    #: methods from those functions, in this order.
    ROUTES: Dict[str, Tuple[str, str]] = {
        "acquire": ("POST", "/v1/leases/acquire"),
        "renew": ("POST", "/v1/leases/renew"),
        "release": ("POST", "/v1/leases/release"),
        "get_scope": ("GET", "/v1/scopes/{scope}"),
        "list_scopes": ("GET", "/v1/scopes"),
        "takeover": ("POST", "/v1/scopes/{scope}/takeover"),
        "cancel": ("POST", "/v1/scopes/{scope}/cancel"),
        "delete_scope": ("DELETE", "/v1/scopes/{scope}"),
        "get_record": ("GET", "/v1/scopes/{scope}/records/{name}"),
        "list_records": ("GET", "/v1/scopes/{scope}/records"),
        "list_records_page": ("GET", "/v1/scopes/{scope}/records"),
        "read_records": ("POST", "/v1/scopes/{scope}/reads"),
        "commit": ("POST", "/v1/commit"),
        "get_operation": ("GET", "/v1/operations/{operationId}"),
        "abandon_operation": ("POST", "/v1/operations/{operationId}/abandon"),
        "list_intents": ("GET", "/v1/intents"),
        "get_intent": ("GET", "/v1/intents/{effectKey}"),
        "claim_intents": ("POST", "/v1/intents/claim"),
        "complete_intent": ("POST", "/v1/intents/{effectKey}/complete"),
        "register_policy": ("POST", "/v1/policies"),
        "list_policies": ("GET", "/v1/policies"),
        "cutover": ("POST", "/v1/cutovers"),
        "list_cutovers": ("GET", "/v1/cutovers"),
        "cutover_report": ("GET", "/v1/cutovers/{cutoverId}/report"),
        "record_job_events": ("POST", "/v1/jobs/events"),
        "audit": ("GET", "/v1/audit"),
        "verify": ("GET", "/v1/verify"),
        "create_token": ("POST", "/v1/admin/tokens"),
        "list_tokens": ("GET", "/v1/admin/tokens"),
        "revoke_token": ("DELETE", "/v1/admin/tokens/{id}"),
        "healthz": ("GET", "/healthz"),
        "readyz": ("GET", "/readyz"),
        "metrics": ("GET", "/metrics"),
        "openapi": ("GET", "/openapi.json"),
    }

    def __init__(
        self,
        base_url: str,
        token: str,
        timeout: float = 10.0,
        retries: int = 3,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
    ) -> None:
        """``timeout``: the most seconds one exchange with the server takes, connecting and
        answering together; ``retries``: extra attempts where allowed; ``max_answer_bytes``: the
        longest answer body read (a longer one is an error, not read to its end)."""
        self.base_url = base_url.rstrip("/")
        self._token = token
        self.timeout = timeout
        self.retries = retries
        self.max_answer_bytes = max_answer_bytes
        self._endpoint = Endpoint(self.base_url)
