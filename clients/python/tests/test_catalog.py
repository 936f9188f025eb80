"""The exception classes and docs/errors.md (the catalog) cannot drift apart."""

import re

import fencegate
from conftest import ROOT

ROW = re.compile(r"^\| `([a-z_]+)` \| (\d{3}) \| (yes|no) \|", re.MULTILINE)


def catalog_in_docs():
    text = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    return {code: (int(status), retry == "yes") for code, status, retry in ROW.findall(text)}


def test_one_exception_class_per_catalog_code():
    documented = catalog_in_docs()
    assert len(documented) > 20
    in_client = {
        code: (cls.http_status, cls.retryable) for code, cls in fencegate.ERROR_CLASSES.items()
    }
    assert in_client == documented, (
        "the Python error classes differ from docs/errors.md: "
        "run `npx tsx scripts/write-python-errors.ts`"
    )


def test_every_class_is_a_fencegate_error_exported_by_name():
    for code, cls in fencegate.ERROR_CLASSES.items():
        assert issubclass(cls, fencegate.FencegateError)
        assert cls.code == code
        assert getattr(fencegate, cls.__name__) is cls
    assert fencegate.StaleFenceError("x").retryable is False
    assert fencegate.StoreUnavailableError("x").retryable is True
