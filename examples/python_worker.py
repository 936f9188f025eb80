"""A Python agent worker that compacts a workflow's memory under a fenced lease.

Run it against a server started with `npm start` (the first start prints a worker-capable
operator token for tenant `dev`):

    pip install ./clients/python          # or: PYTHONPATH=clients/python
    FENCEGATE_TOKEN=fg_... python examples/python_worker.py

It holds the scope with a LeaseKeeper (renewed in the background), reads the memory record,
commits the compacted memory together with an intent to notify (delivered by the dispatcher),
and decides from the answer: committed, retry on a newer revision, or stop when authority is
gone. FENCEGATE_URL (default http://127.0.0.1:7420) and FENCEGATE_WORKFLOW (default wf-demo)
pick the server and the workflow.
"""

import os
import sys
import uuid
from pathlib import Path

try:
    import fencegate
except ImportError:  # run from a checkout without installing the client
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients" / "python"))
    import fencegate

from fencegate import Intent, LeaseKeeper, Write


def compact(memory):
    """The agent's work: keep the last three notes and count the rest."""
    notes = list(memory.get("notes", [])) if isinstance(memory, dict) else []
    notes.append(f"note {len(notes) + 1} from the python worker")
    kept = notes[-3:]
    return {"notes": kept, "compacted": (memory or {}).get("compacted", 0) + len(notes) - len(kept)}


def run(client: fencegate.Client, workflow: str) -> int:
    scope = f"{workflow}/memory"
    holder = f"python-worker-{uuid.uuid4().hex[:8]}"
    with LeaseKeeper(client, scope, holder, ttl_ms=30_000) as lease:
        print(f"{holder} holds {scope} with fence {lease.fence}")
        for attempt in range(3):
            lease.check()  # stop early if a takeover or a lapse ended our authority
            memory = client.get_record(scope, "memory")
            compacted = compact(memory.value)
            result = lease.commit(
                operation_id=f"{holder}-compact-{attempt}",
                writes=[Write("memory", expect_revision=memory.revision, value=compacted)],
                intents=[
                    Intent(
                        effect_key=f"{holder}-notify-{memory.revision + 1}",
                        target="notify",
                        payload={"scope": scope, "revision": memory.revision + 1},
                    )
                ],
            )
            if result.committed:
                record = result.records[0]
                print(f"committed revision {record.revision} of {scope} (fence {result.fence})")
                return 0
            assert result.error is not None
            if result.error.code in ("stale_revision", "stale_dependency"):
                print(f"{result.error.code}: someone else changed the memory; reading it again")
                continue
            # stale_fence, lease_expired, authority_revoked ...: another worker owns the scope now.
            print(f"stopping: {result.error.code} ({result.error.message})")
            return 2
    return 1


def main() -> int:
    token = os.environ.get("FENCEGATE_TOKEN")
    if not token:
        print("set FENCEGATE_TOKEN to a worker or operator token (npm start prints one)")
        return 64
    client = fencegate.Client(os.environ.get("FENCEGATE_URL", "http://127.0.0.1:7420"), token)
    try:
        return run(client, os.environ.get("FENCEGATE_WORKFLOW", "wf-demo"))
    except fencegate.FencegateError as error:
        print(f"fencegate refused: {error}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
