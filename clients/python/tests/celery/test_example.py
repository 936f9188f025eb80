"""examples/python_celery.py runs as its docstring says, against a real server and Redis."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("celery.app")  # the package, not this directory
redis = pytest.importorskip("redis")

from conftest import PACKAGE  # noqa: E402

EXAMPLE = PACKAGE.parents[1] / "examples" / "python_celery.py"


def test_the_celery_example_charges_once_and_returns_the_stored_result(celery_env, tenant):
    env = {**celery_env, "CELERY_BROKER_URL": celery_env["FG_CELERY_REDIS"], "PYTHONPATH": ""}

    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=90
    )

    litter = redis.Redis.from_url(env["CELERY_BROKER_URL"])
    for key in litter.scan_iter(match="_kombu.binding.charges-*"):  # the example's own queues
        litter.delete(key)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("charged: {'order': 'order-42', 'amount': 1999, 'charged_by': ")
    assert lines[1] == "delivered again, the stored result: " + lines[0][len("charged: "):]
    assert lines[2] == "charges queued for order-42: 1"
    assert tenant.operator().verify().ok


def test_the_example_says_what_it_needs_without_a_token(celery_env):
    env = {k: v for k, v in celery_env.items() if k != "FENCEGATE_TOKEN"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 64
    assert "FENCEGATE_TOKEN" in done.stdout
