"""Which of the two client shapes an object has: ``Client``'s (``ClientApi``: a call answers when
it is done) or ``AsyncClient``'s (``AsyncClientApi``: each call is a coroutine). The integrations
that take either tell them apart here."""

import inspect
from typing import Union

from ._methods import AsyncClientApi, ClientApi

#: Either shape, where an integration takes both.
EitherClientApi = Union[ClientApi, AsyncClientApi]


def is_async_client(client: object) -> bool:
    return inspect.iscoroutinefunction(getattr(client, "get_record", None))


def is_blocking_client(client: object) -> bool:
    method = getattr(client, "get_record", None)
    return callable(method) and not inspect.iscoroutinefunction(method)
