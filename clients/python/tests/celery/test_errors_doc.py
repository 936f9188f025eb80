"""docs/errors.md lists TaskSupersededError with the codes it is raised with."""

import re

import pytest

pytest.importorskip("celery.app")  # the package, not this directory

from celery.exceptions import Ignore  # noqa: E402

import fencegate  # noqa: E402
from conftest import PACKAGE  # noqa: E402
from fencegate.celery import TaskSupersededError  # noqa: E402
from fencegate.celery.superseded import SUPERSEDED_CODES  # noqa: E402

ERRORS_DOC = PACKAGE.parents[1] / "docs" / "errors.md"


def test_the_catalog_lists_the_superseded_run_error_with_its_codes():
    text = ERRORS_DOC.read_text(encoding="utf-8")
    row = re.search(r"^\| `fencegate\.celery\.TaskSupersededError` \(Python\) \| ([^|]+) \|", text,
                    re.MULTILINE)
    assert row is not None, "docs/errors.md has no row for TaskSupersededError"
    assert set(re.findall(r"`([a-z_]+)`", row.group(1))) == SUPERSEDED_CODES


def test_a_superseded_run_error_is_a_fencegate_error_and_celery_s_ignore():
    error = TaskSupersededError("replaced", {"currentFence": 3}, code="not_holder")
    assert isinstance(error, fencegate.FencegateError) and isinstance(error, Ignore)
    assert error.code == "not_holder" and error.details == {"currentFence": 3}
    assert TaskSupersededError.is_task_superseded_error is True
    assert TaskSupersededError("replaced").code == "stale_fence"
