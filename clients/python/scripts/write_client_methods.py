"""Writes fencegate/_methods.py: the typed API methods of ``Client`` and ``AsyncClient``, and the
two client shapes as Protocols, from the functions of fencegate/_api.py (one per call, named in
``ClientBase.ROUTES``): ``python clients/python/scripts/write_client_methods.py``.

The methods are written out, not installed at run time, so that a type checker sees each one's
arguments and answer. tests/test_client_methods.py checks that the file is current. The output is
already in ``ruff format``'s shape (one argument per line, trailing commas), so the check of the
formatting and this script agree.
"""

import ast
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Set

PACKAGE = Path(__file__).resolve().parent.parent / "fencegate"
TARGET = PACKAGE / "_methods.py"
LINE_LENGTH = 100
INDENT = "    "
#: The local that holds a call's steps in each method; an argument may not start with ``_``, so
#: no argument (``steps`` of a rollout, say) is hidden by it.
STEPS = "_steps"


@dataclass(frozen=True)
class Call:
    """One function of _api.py as the methods made from it see it."""

    name: str
    #: ``name: annotation = default`` of each argument after the client, as written.
    parameters: List[str]
    arguments: List[str]
    answer: str
    #: The docstring's source, quotes included, or None.
    docstring: Optional[str]


def routes() -> List[str]:
    """The method names of ``ClientBase.ROUTES``, in order."""
    tree = ast.parse((PACKAGE / "_client_base.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "ROUTES":
            assert node.value is not None
            return list(ast.literal_eval(node.value))
    raise SystemExit("_client_base.py has no ROUTES")


def read_calls(source: str) -> Dict[str, Call]:
    """Every public function of _api.py: its arguments after the client, and its answer."""
    calls: Dict[str, Call] = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
            continue
        arguments = node.args
        if arguments.posonlyargs or arguments.vararg or arguments.kwonlyargs or arguments.kwarg:
            raise SystemExit(f"_api.{node.name}: only plain arguments can be written as methods")
        given = arguments.args[1:]  # after the client
        defaults: List[Optional[ast.expr]] = [None] * (len(given) - len(arguments.defaults))
        defaults += arguments.defaults
        parameters = []
        for argument, default in zip(given, defaults):
            if argument.arg.startswith("_"):
                raise SystemExit(f"_api.{node.name}: an argument may not start with _")
            if argument.annotation is None:
                raise SystemExit(f"_api.{node.name}: {argument.arg} has no annotation")
            text = f"{argument.arg}: {_segment(source, argument.annotation)}"
            if default is not None:
                text += f" = {_segment(source, default)}"
            parameters.append(text)
        calls[node.name] = Call(
            name=node.name,
            parameters=parameters,
            arguments=[argument.arg for argument in given],
            answer=_answer(node, source),
            docstring=_docstring(node, source),
        )
    return calls


def _segment(source: str, node: ast.AST) -> str:
    text = ast.get_source_segment(source, node)
    assert text is not None
    return text


def _answer(node: ast.FunctionDef, source: str) -> str:
    """``T`` of the function's ``"CallSteps[T]"``."""
    returns = node.returns
    text = returns.value if isinstance(returns, ast.Constant) else None
    if not (isinstance(text, str) and text.startswith("CallSteps[") and text.endswith("]")):
        raise SystemExit(f'_api.{node.name} must return "CallSteps[...]"')
    return text[len("CallSteps[") : -1]


def _docstring(node: ast.FunctionDef, source: str) -> Optional[str]:
    first = node.body[0]
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)):
        return None
    if not isinstance(first.value.value, str):
        return None
    return _segment(source, first)


def imports(source: str, calls: List[Call]) -> List[str]:
    """Import lines for the names the signatures use, from where _api.py imports them."""
    origin: Dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            module = "." * node.level + node.module
            for alias in node.names:
                origin[alias.asname or alias.name] = module
    used: Set[str] = set()
    for call in calls:
        for text in [*call.parameters, call.answer]:
            tree = ast.parse(text.split(":", 1)[-1].split(" = ")[0].strip(), mode="eval")
            used.update(n.id for n in ast.walk(tree) if isinstance(n, ast.Name))
    by_module: Dict[str, Set[str]] = {"typing": {"Protocol"}}
    for name in sorted(used - {"None", "bool", "int", "str", "float", "type"}):
        if name not in origin:
            raise SystemExit(f"_api.py does not import {name}, which a signature uses")
        by_module.setdefault(origin[name], set()).add(name)
    return [_import_line(module, sorted(names)) for module, names in by_module.items()]


def _import_line(module: str, names: List[str]) -> str:
    line = f"from {module} import {', '.join(names)}"
    if len(line) <= LINE_LENGTH:
        return line
    return f"from {module} import (\n" + "".join(f"{INDENT}{name},\n" for name in names) + ")"


def signature(call: Call, asynchronous: bool, stub: bool = False) -> str:
    """The method's signature; a stub's with its ``...`` body."""
    end = ": ..." if stub else ":"
    keyword = "async def" if asynchronous else "def"
    one_line = f"{INDENT}{keyword} {call.name}({', '.join(['self', *call.parameters])})"
    one_line += f" -> {call.answer}{end}"
    if len(one_line) <= LINE_LENGTH:
        return one_line
    lines = [f"{INDENT}{keyword} {call.name}(", f"{INDENT * 2}self,"]
    lines += [f"{INDENT * 2}{parameter}," for parameter in call.parameters]
    lines.append(f"{INDENT}) -> {call.answer}{end}")
    return "\n".join(lines)


def body(call: Call, asynchronous: bool) -> List[str]:
    """Runs the call's steps with the client's own I/O."""
    lines = []
    if call.docstring is not None:
        # The docstring moves from a function's body into a method's: one level deeper.
        first, *rest = call.docstring.split("\n")
        lines.append(INDENT * 2 + first)
        lines += [INDENT + line if line.strip() else "" for line in rest]
    steps = f"_api.{call.name}({', '.join(['self', *call.arguments])})"
    if len(f"{INDENT * 2}{STEPS} = {steps}") > LINE_LENGTH:
        arguments = "".join(f"{INDENT * 3}{a},\n" for a in ["self", *call.arguments])
        steps = f"_api.{call.name}(\n{arguments}{INDENT * 2})"
    lines.append(f"{INDENT * 2}{STEPS} = {steps}")
    run = "await run_async" if asynchronous else "run_sync"
    result = f"{run}({STEPS}, self._exchange)"
    lines.append(
        f"{INDENT * 2}{result}" if call.answer == "None" else f"{INDENT * 2}return {result}"
    )
    return lines


def client_class(name: str, doc: str, calls: List[Call], asynchronous: bool) -> str:
    exchange = (
        "async def _exchange(self, step: Exchange) -> Reply:"
        if asynchronous
        else "def _exchange(self, step: Exchange) -> Reply:"
    )
    parts = [
        f"class {name}(ClientBase):\n"
        f'{INDENT}"""{doc}"""\n\n'
        f"{INDENT}@abstractmethod\n"
        f"{INDENT}{exchange}\n"
        f'{INDENT * 2}"""One HTTP exchange with the server."""'
    ]
    for call in calls:
        parts.append("\n".join([signature(call, asynchronous), *body(call, asynchronous)]))
    return "\n\n".join(parts)


def protocol(name: str, doc: str, calls: List[Call], asynchronous: bool) -> str:
    parts = [f'class {name}(Protocol):\n{INDENT}"""{doc}"""']
    for call in calls:
        # A stub's body stays on its signature's line, as ``ruff format`` writes it.
        parts.append(signature(call, asynchronous, stub=True))
    return "\n\n".join(parts)


def render() -> str:
    """The text of _methods.py for the current _api.py."""
    source = (PACKAGE / "_api.py").read_text(encoding="utf-8")
    found = read_calls(source)
    names = routes()
    missing = [name for name in names if name not in found]
    unnamed = [name for name in found if name not in names]
    if missing or unnamed:
        raise SystemExit(
            f"ClientBase.ROUTES and the functions of _api.py differ: no function for {missing}, "
            f"no route for {unnamed}"
        )
    calls = [found[name] for name in names]
    header = [
        '"""The API methods of ``Client`` and ``AsyncClient``, and the two client shapes as',
        "Protocols, one method per function of _api.py, in the order of ``ClientBase.ROUTES``.",
        "",
        "Generated from _api.py by scripts/write_client_methods.py; do not edit. The tests check",
        "that it is current.",
        '"""',
        "",
        "from abc import abstractmethod",
        *sorted(line for line in imports(source, calls) if line.startswith("from typing")),
        "",
        "from . import _api",
        *sorted(
            [
                "from ._call_steps import Exchange, run_async, run_sync",
                "from ._client_base import ClientBase",
                "from ._wire import Reply",
                *(line for line in imports(source, calls) if not line.startswith("from typing")),
            ]
        ),
    ]
    classes = [
        client_class(
            "BlockingMethods",
            "Every API call as a method that answers when the exchange is done.",
            calls,
            asynchronous=False,
        ),
        client_class(
            "AsyncMethods",
            "Every API call as a coroutine; the event loop runs on while it waits.",
            calls,
            asynchronous=True,
        ),
        protocol(
            "ClientApi",
            "What a ``fencegate.Client`` offers: every API call, answering when it is done.",
            calls,
            asynchronous=False,
        ),
        protocol(
            "AsyncClientApi",
            "What a ``fencegate.AsyncClient`` offers: every API call, as a coroutine.",
            calls,
            asynchronous=True,
        ),
    ]
    return "\n".join(header) + "\n\n\n" + "\n\n\n".join(classes) + "\n"


def main() -> None:
    TARGET.write_text(render(), encoding="utf-8")
    print(f"wrote {TARGET.relative_to(PACKAGE.parent)}", file=sys.stderr)


if __name__ == "__main__":
    main()
