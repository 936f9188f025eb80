"""A Python worker that the frozen-worker test stops with SIGSTOP between its read and its commit.

It acquires the scope with a LeaseKeeper, reads the record, prints READ and waits for a line on
stdin before it commits (the test sends that line while the process is frozen), then prints the
commit result as one JSON line.

    python frozen_worker.py URL TOKEN SCOPE NAME VALUE
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fencegate  # noqa: E402


def main() -> None:
    url, token, scope, name, value = sys.argv[1:6]
    client = fencegate.Client(url, token)
    with fencegate.LeaseKeeper(client, scope, "py-worker", ttl_ms=3_000, renew_every=0.2) as lease:
        record = client.get_record(scope, name)
        print(json.dumps({"event": "READ", "fence": lease.fence}), flush=True)
        sys.stdin.readline()
        result = lease.commit(
            f"py-worker-{lease.fence}",
            writes=[fencegate.Write(name, expect_revision=record.revision, value=value)],
        )
        print(
            json.dumps(
                {
                    "event": "COMMITTED" if result.committed else "REJECTED",
                    "code": result.error.code if result.error else None,
                    "details": result.error.details if result.error else None,
                    "lost": lease.lost.is_set(),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
