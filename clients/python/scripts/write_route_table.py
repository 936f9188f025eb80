"""Writes fencegate/_route_table.py: the server's routes (method, path, who may call each, its
retry class) and the refusal codes that mean authority is gone, from the route table and the
error catalog of the TypeScript sources, as `npx tsx scripts/route-table-json.ts` prints them:
``python clients/python/scripts/write_route_table.py``.

tests/test_route_table.py checks that the file is what this script writes now, so a change to the
route table fails the Python tests until the file is written again. The output is already in
``ruff format``'s shape (one field per line, trailing commas).
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

PROJECT = Path(__file__).resolve().parent.parent
ROOT = PROJECT.parent.parent
TARGET = PROJECT / "fencegate" / "_route_table.py"
EXPORT = ROOT / "scripts" / "route-table-json.ts"
INDENT = "    "

HEADER = '''\
"""The HTTP routes of the fencegate server, and the refusals that mean authority is gone.

Generated from src/route-table.ts and src/errors.ts by scripts/write_route_table.py; do not edit.
Each API call of _api.py takes its method, path and retry class from here by route name.
"""

from typing import FrozenSet, Mapping, NamedTuple, Tuple


class Route(NamedTuple):
    """One route; ``path`` has a ``:param`` segment for each of ``params``."""

    method: str
    path: str
    #: Who may call it: public, worker, operator or admin.
    auth: str
    #: What a client may do after its reply was lost (docs/http.md, "Retry classes").
    retry: str
    params: Tuple[str, ...]
'''


def table_from_typescript() -> Dict[str, Any]:
    """The route table JSON, printed by the TypeScript export (node from FENCEGATE_NODE)."""
    node = os.environ.get("FENCEGATE_NODE", "node")
    printed = subprocess.run(
        [node, "--import", "tsx", str(EXPORT)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    table: Dict[str, Any] = json.loads(printed)
    return table


def _text(value: str) -> str:
    return json.dumps(value)


def _strings(values: List[str]) -> str:
    """A tuple of strings on one line, as ``ruff format`` writes a short one."""
    if not values:
        return "()"
    if len(values) == 1:
        return f"({_text(values[0])},)"
    return f"({', '.join(_text(value) for value in values)})"


def _route(route: Dict[str, Any]) -> List[str]:
    fields = [
        f"method={_text(route['method'])}",
        f"path={_text(route['path'])}",
        f"auth={_text(route['auth'])}",
        f"retry={_text(route['retry'])}",
        f"params={_strings(route['params'])}",
    ]
    return [
        f"{INDENT}{_text(route['name'])}: Route(",
        *(f"{INDENT * 2}{field}," for field in fields),
        f"{INDENT}),",
    ]


def _code_set(name: str, comment: str, codes: List[str]) -> List[str]:
    return [
        f"#: {comment}",
        f"{name}: FrozenSet[str] = frozenset(",
        f"{INDENT}{{",
        *(f"{INDENT * 2}{_text(code)}," for code in codes),
        f"{INDENT}}}",
        ")",
    ]


def render(table: Dict[str, Any]) -> str:
    """The text of _route_table.py for the route table JSON ``table``."""
    lines = [
        "",
        "",
        "#: Every route by its name in the table, in the table's order.",
        "ROUTES: Mapping[str, Route] = {",
    ]
    for route in table["routes"]:
        lines += _route(route)
    lines += [
        "}",
        "",
        "#: The retry classes, as docs/http.md describes them.",
        "RETRY_CLASSES: Tuple[str, ...] = (",
        *(f"{INDENT}{_text(retry)}," for retry in table["retryClasses"]),
        ")",
        "",
    ]
    codes = table["leaseLostCodes"]
    lines += _code_set(
        "RENEWAL_LEASE_LOST_CODES",
        "The refusals of a renewal that mean the lease is gone for good.",
        codes["renewal"],
    )
    lines.append("")
    lines += _code_set(
        "COMMIT_AUTHORITY_LOST_CODES",
        "The rejections of a commit that mean the writer holds no authority over its scope.",
        codes["commit"],
    )
    return HEADER + "\n".join(lines) + "\n"


def main() -> None:
    TARGET.write_text(render(table_from_typescript()), encoding="utf-8")
    print(f"wrote {TARGET.relative_to(PROJECT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
