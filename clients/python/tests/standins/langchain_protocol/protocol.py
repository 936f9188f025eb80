"""STAND-IN for `langchain_protocol.protocol`, used only by fencegate's tests.

See the package docstring: the real module defines the typed dictionaries of
the chat-model streaming protocol; here every name is a plain dict type, enough
for the modules that import them to load. Users install the real package.
"""

from ._placeholder import placeholder_type


def __getattr__(name: str) -> type:
    if name.startswith("__"):
        raise AttributeError(name)
    return placeholder_type(globals(), name)
