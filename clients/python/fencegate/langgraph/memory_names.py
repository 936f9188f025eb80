"""Where FencedStore keeps a thread's long-term memory, named exactly as the TypeScript
FencedStore names it (src/integrations/langgraph/memory-names.ts), so that memory a TypeScript
worker wrote reads here and the other way round: records of the thread's scope named ::

    mem/<namespace label>/…/<namespace label>/<key>

every piece escaped (``fencegate/_names.py``), so ``/`` only separates pieces: the last piece is
the key, the others the namespace, and ``mem/<labels>/`` selects a namespace and all below it.
"""

from typing import Any, Optional, Sequence, Tuple

from .._names import NAME_LIMIT, escape_name, unescape_name
from ..errors import InvalidRequestError

MEMORY_PREFIX = "mem/"


def memory_name(namespace: Sequence[str], key: str) -> str:
    """The record holding ``key`` of ``namespace``; a name too long for a record is refused."""
    if not isinstance(key, str) or key == "":
        raise InvalidRequestError("a memory key must be a non-empty string", {"field": "key"})
    name = namespace_prefix(namespace) + escape_name(key)
    if len(name) > NAME_LIMIT:
        raise InvalidRequestError(
            f"namespace {list(namespace)!r} with key {key!r} makes a record name of {len(name)} "
            f"characters, more than {NAME_LIMIT}; use shorter labels or keys",
            {"field": "key", "length": len(name), "limit": NAME_LIMIT},
        )
    return name


def namespace_prefix(namespace: Sequence[str]) -> str:
    """The prefix of every record of ``namespace`` and of the namespaces below it."""
    return MEMORY_PREFIX + "".join(f"{escape_name(label)}/" for label in namespace)


def memory_address(name: str) -> Optional[Tuple[Tuple[str, ...], str]]:
    """The namespace and key a memory record name stands for; None when ``memory_name`` would
    never write that name (a bad or needless escape, bytes that are no UTF-8, an empty key, a name
    too long): a record so named, committed raw by the thread's holder, is no memory item, and
    must not read as one another key names."""
    if not name.startswith(MEMORY_PREFIX):
        return None
    try:
        pieces = [unescape_name(piece) for piece in name[len(MEMORY_PREFIX) :].split("/")]
        namespace, key = tuple(pieces[:-1]), pieces[-1]
        canonical = memory_name(namespace, key)
    except (ValueError, InvalidRequestError):
        return None
    return (namespace, key) if canonical == name else None


def check_namespace(namespace: Any, *, allow_empty: bool = False, written: bool = False) -> None:
    """LangGraph's namespace rules, as both languages' stores apply them (non-empty string labels
    without ``.``, ``:`` or NUL; ``langgraph`` not the root of a written namespace), answered as
    the catalog's ``invalid_request``."""
    if not isinstance(namespace, (tuple, list)):
        raise _refused("a namespace must be a tuple of strings")
    if not namespace and not allow_empty:
        raise _refused("a namespace cannot be empty")
    for label in namespace:
        if not isinstance(label, str):
            raise _refused(f"namespace labels must be strings, got {type(label).__name__}")
        if label == "":
            raise _refused(f"namespace labels cannot be empty strings: {tuple(namespace)!r}")
        for char, called in ((".", "periods"), (":", "colons"), ("\0", "NUL bytes")):
            if char in label:
                raise _refused(f"namespace label {label!r} contains {called}; they are not allowed")
    if written and namespace and namespace[0] == "langgraph":
        raise _refused(f'the root label of a namespace cannot be "langgraph": {tuple(namespace)!r}')


def _refused(message: str) -> InvalidRequestError:
    return InvalidRequestError(message, {"field": "namespace"})
