"""STAND-IN for the `langchain-protocol` package, used only by fencegate's tests.

langchain-core and langgraph-sdk import type definitions from
`langchain-protocol` (the chat-model streaming protocol), which the test
machine's package index does not carry. This stand-in lets those modules
import; nothing under test uses these types. Users install the real package
(`pip install langchain-protocol`, pulled in by langchain-core).
"""

from ._placeholder import placeholder_type


def __getattr__(name: str) -> type:
    if name.startswith("__"):
        raise AttributeError(name)
    return placeholder_type(globals(), name)
