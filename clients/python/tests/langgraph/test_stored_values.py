"""How a value is kept in a record: plain JSON under the ``json`` tag (what a TypeScript saver
reads too), anything JSON would not give back as it was under the serializer's own tag, so every
value reads back equal and of the same type."""

import math

import pytest
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from fencegate.langgraph.stored import dump, load

SERDE = JsonPlusSerializer()


def nested(depth):
    value = "leaf"
    for _ in range(depth):
        value = {"in": [value]}
    return value


@pytest.mark.parametrize(
    "value",
    [None, 1, True, "text", 2.5, [1, "a", None], {"a": {"b": [1, 2.5, {"c": False}]}}, {}, []],
)
def test_plain_json_is_kept_under_the_json_tag(value):
    stored = dump(SERDE, value)
    assert stored["type"] == "json"
    assert load(SERDE, stored) == value


@pytest.mark.parametrize(
    "value",
    [
        {1: "int key"},
        [{"a": {2: "deep int key"}}],
        float("inf"),
        {"a": [float("-inf")]},
        b"bytes",
        nested(40),  # 80 levels of dict and list: deeper than JSON is trusted with
    ],
)
def test_what_json_would_change_goes_to_the_serializer_and_reads_back_the_same(value):
    stored = dump(SERDE, value)
    assert stored["type"] != "json"
    back = load(SERDE, stored)
    assert back == value and type(back) is type(value)


def test_a_tuple_is_not_written_as_a_json_list():
    # The serializer decides what a tuple reads back as; JSON would make it a list regardless.
    assert dump(SERDE, (1, 2))["type"] != "json"
    assert dump(SERDE, {"a": [(1, 2)]})["type"] != "json"


def test_not_a_number_goes_to_the_serializer():
    stored = dump(SERDE, {"x": float("nan")})
    assert stored["type"] != "json"
    assert math.isnan(load(SERDE, stored)["x"])


def test_json_as_deep_as_trusted_stays_json():
    assert dump(SERDE, nested(32))["type"] == "json"  # 64 levels
