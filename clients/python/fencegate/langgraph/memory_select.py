"""What a FencedStore search and list_namespaces keep, as the TypeScript store decides it
(memory-filter.ts, memory-namespaces.ts).

A search ``filter`` keeps an item when every field matches: a plain value an equal value (objects
and lists compared as canonical JSON), an object of operators (``$eq``, ``$ne``, ``$gt``, ``$gte``,
``$lt``, ``$lte``, ``$in``, ``$nin``) when each holds. An unknown operator is refused rather than
read as "no match". list_namespaces keeps the namespaces meeting every match condition (``*``
matches any one label), cuts them to ``max_depth`` labels, sorts, then pages.
"""

import json
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Tuple

from langgraph.store.base import ListNamespacesOp, MatchCondition

from ..errors import InvalidRequestError

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin")


def check_filter(filter: Any) -> None:
    if filter is None:
        return
    if not isinstance(filter, Mapping):
        raise InvalidRequestError("a search filter must be a dict of fields", {"field": "filter"})
    for field, condition in filter.items():
        if not _is_operators(condition):
            continue
        for operator in condition:
            if operator not in OPERATORS:
                raise InvalidRequestError(
                    f"filter operator {operator} on {field} is not supported; use one of "
                    + ", ".join(OPERATORS),
                    {"field": f"filter.{field}"},
                )


def matches_filter(value: Mapping[str, Any], filter: Optional[Mapping[str, Any]]) -> bool:
    if not filter:
        return True
    for field, condition in filter.items():
        actual = value.get(field, _MISSING)
        if _is_operators(condition):
            if not all(_holds(op, actual, operand) for op, operand in condition.items()):
                return False
        elif not _same(actual, condition):
            return False
    return True


def select_namespaces(
    namespaces: Iterable[Tuple[str, ...]], op: ListNamespacesOp
) -> List[Tuple[str, ...]]:
    kept = set()
    for namespace in namespaces:
        if not all(_meets(namespace, condition) for condition in op.match_conditions or ()):
            continue
        kept.add(namespace if op.max_depth is None else namespace[: op.max_depth])
    return sorted(kept)[op.offset : op.offset + op.limit]


class _Missing:
    """A field the item does not have: equal to nothing, as JavaScript's undefined."""


_MISSING: Any = _Missing()


def _meets(namespace: Sequence[str], condition: MatchCondition) -> bool:
    path = condition.path
    if len(path) > len(namespace):
        return False
    start = 0 if condition.match_type == "prefix" else len(namespace) - len(path)
    return all(label in ("*", namespace[start + i]) for i, label in enumerate(path))


def _is_operators(condition: Any) -> bool:
    return isinstance(condition, Mapping) and any(str(key).startswith("$") for key in condition)


def _holds(operator: str, actual: Any, operand: Any) -> bool:
    if operator == "$eq":
        return _same(actual, operand)
    if operator == "$ne":
        return not _same(actual, operand)
    if operator in ("$in", "$nin"):
        found = isinstance(operand, list) and any(_same(actual, item) for item in operand)
        return found if operator == "$in" else not found
    left, right = _number(actual), _number(operand)
    if left is None or right is None:
        return False
    if operator == "$gt":
        return left > right
    if operator == "$gte":
        return left >= right
    if operator == "$lt":
        return left < right
    return left <= right


def _number(value: Any) -> Optional[float]:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _same(a: Any, b: Any) -> bool:
    if a is _MISSING or b is _MISSING:
        return False
    if a == b and type(a) is type(b):
        return True
    return _canonical(a) == _canonical(b)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
