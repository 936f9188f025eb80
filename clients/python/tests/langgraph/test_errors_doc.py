"""docs/errors.md lists StaleWriteOwnerError with exactly the codes the saver raises it with."""

import re
from pathlib import Path

import fencegate
from fencegate.langgraph import STALE_OWNER_CODES, StaleWriteOwnerError

ERRORS_DOC = Path(__file__).resolve().parents[4] / "docs" / "errors.md"


def test_the_catalog_lists_the_stale_write_owner_error_with_its_codes():
    text = ERRORS_DOC.read_text(encoding="utf-8")
    row = re.search(
        r"^\| `fencegate\.langgraph\.StaleWriteOwnerError` \(Python\) \| ([^|]+) \|",
        text,
        re.MULTILINE,
    )
    assert row is not None, "docs/errors.md has no row for StaleWriteOwnerError"
    assert set(re.findall(r"`([a-z_]+)`", row.group(1))) == STALE_OWNER_CODES


def test_the_error_is_a_fencegate_error_carrying_the_refusal_and_the_marker():
    error = StaleWriteOwnerError(
        "superseded", {"currentFence": 4}, code="not_holder", thread_id="t"
    )
    assert isinstance(error, fencegate.FencegateError)
    assert (error.code, error.details, error.thread_id) == ("not_holder", {"currentFence": 4}, "t")
    assert StaleWriteOwnerError.is_stale_write_owner_error is True
    assert StaleWriteOwnerError("superseded").code == "stale_fence"
