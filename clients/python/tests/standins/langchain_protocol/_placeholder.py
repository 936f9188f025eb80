"""STAND-IN helper, used only by fencegate's tests (see the package docstring)."""

from typing import Any, Dict


def placeholder_type(namespace: Dict[str, Any], name: str) -> type:
    """A dict type named `name`, created once per module, for an imported type name.

    The real names are TypedDicts, which are dicts at run time, so a dict
    subclass is the closest import-only equivalent.
    """
    created = type(
        name,
        (dict,),
        {"__module__": namespace["__name__"], "__doc__": "Stand-in type (tests only)."},
    )
    namespace[name] = created
    return created
