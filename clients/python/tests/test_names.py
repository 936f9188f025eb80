"""fit_name: names that fit are kept, longer ones are shortened, and a shortened name never equals
a name that was not shortened. The vectors are shared with the TypeScript fitName, so both
languages give one id the same names."""

import json
from pathlib import Path

import pytest
from fencegate._names import escape_name, fit_name

VECTORS = Path(__file__).resolve().parents[3] / "test" / "fixtures" / "fit-name-vectors.json"


def _vectors():
    return json.loads(VECTORS.read_text(encoding="utf-8"))["vectors"]


@pytest.mark.parametrize("vector", _vectors(), ids=lambda vector: vector["case"])
def test_fit_name_gives_the_shared_vectors(vector):
    assert fit_name(vector["name"], vector["limit"]) == vector["fitted"]


def test_a_name_of_the_limit_never_equals_the_shortened_form_of_a_longer_name():
    shortened = fit_name("celery/" + escape_name("t" * 300))
    assert len(shortened) == 256

    lookalike = fit_name(shortened)

    assert lookalike != shortened
    assert len(lookalike) == 256


def test_names_made_of_escaped_pieces_that_fit_are_kept():
    escaped = f"celery/{escape_name('a/@-' * 20)}/{escape_name('-' * 32)}"
    assert len(escaped) <= 256
    assert fit_name(escaped) == escaped
