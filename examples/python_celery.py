"""A Celery task with exactly one accepted result: fencegate.celery.fenced_task.

With ``acks_late``, Redis redelivers a task whose run outlasts the broker's visibility timeout to
another worker while the first run goes on, and both run the body. Under fenced_task each
delivery takes the task's scope (the latest one wins, with the worker take-over right), the
result and the task's effects (intents) are committed under the run's fence, and a delivery of a
task whose result is stored returns it without running the body.

Run it with a fencegate server, a worker token that may take over the task scopes, and Redis:

    pip install "./clients/python[celery]"     # or: PYTHONPATH=clients/python
    fencegate token create --tenant dev --role worker --may-take-over celery/
    FENCEGATE_TOKEN=fg_... python examples/python_celery.py

It starts one Celery worker process (through Celery's Python API), sends a charge, then delivers
the same task again and shows that the stored result comes back and one charge is queued.
FENCEGATE_URL (default http://127.0.0.1:7420) and CELERY_BROKER_URL (default
redis://127.0.0.1:6379/0, also the result backend) pick the server and Redis.
"""

import os
import subprocess
import sys
import uuid
from pathlib import Path

try:
    import fencegate
except ImportError:  # run from a checkout without installing the client
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients" / "python"))
    import fencegate

from celery import Celery

from fencegate.celery import fenced_task

URL = os.environ.get("FENCEGATE_URL", "http://127.0.0.1:7420")
TOKEN = os.environ.get("FENCEGATE_TOKEN", "")
BROKER = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")

app = Celery("charges", broker=BROKER, backend=BROKER)
app.conf.update(
    task_acks_late=True,
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=True,
    # A run longer than this is delivered again, to another worker: fenced_task is made for it.
    broker_transport_options={"visibility_timeout": 60},
)
client = fencegate.Client(URL, TOKEN)


@app.task(bind=True, acks_late=True)
@fenced_task(client=client, ttl_ms=30_000)
def charge(task, fence, order, amount):
    # The payment is an intent: stored with the result, under this run's fence, or not at all.
    fence.add_intent(f"charge-{order}", "payments", {"order": order, "amount": amount})
    return {"order": order, "amount": amount, "charged_by": fence.holder}


def main() -> int:
    if TOKEN == "":
        print("set FENCEGATE_TOKEN to a worker token (fencegate token create --tenant dev "
              "--role worker --may-take-over celery/)")
        return 64
    queue = f"charges-{uuid.uuid4().hex[:8]}"
    # The worker's own output goes to stderr, so stdout is the story.
    worker = subprocess.Popen([sys.executable, __file__, "worker", queue], stdout=sys.stderr)
    try:
        first = charge.apply_async(args=["order-42", 1999], queue=queue)
        result = first.get(timeout=60)
        print(f"charged: {result}")
        again = charge.apply_async(args=["order-42", 1999], queue=queue, task_id=first.id)
        print(f"delivered again, the stored result: {again.get(timeout=60)}")
        intents = client.list_intents(scope=f"celery/{first.id}").items
        print(f"charges queued for order-42: {len(intents)}")
        first.forget()  # the result stays stored in fencegate, where later deliveries find it
        return 0 if again.get() == result and len(intents) == 1 else 1
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        app.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        app.Worker(
            queues=[sys.argv[2]], pool="solo", concurrency=1, loglevel="WARNING", quiet=True
        ).start()
    else:
        sys.exit(main())
