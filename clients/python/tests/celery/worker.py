"""A Celery worker process, started through Celery's Python API (no command line)."""

import os
import sys

from tasks import app

if __name__ == "__main__":
    app.Worker(
        hostname=sys.argv[1],
        pool="solo",
        concurrency=1,
        loglevel="INFO",
        without_heartbeat=True,
        without_mingle=True,
        without_gossip=True,
        # A fleet of one policy version consumes that version's queue (FG_CELERY_QUEUE).
        queues=os.environ.get("FG_CELERY_QUEUE") or None,
    ).start()
