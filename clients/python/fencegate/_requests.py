"""Request parts built from keyword arguments: wire bodies, query strings and path segments."""

import re
from typing import Any, Dict, Mapping, Optional
from urllib.parse import quote, urlencode

from .errors import InvalidRequestError
from .models import camel

_NAME = re.compile(r"^[A-Za-z0-9._:/@-]{1,256}$")


def body(**fields: Any) -> Dict[str, Any]:
    """Keyword arguments as a wire body: camelCase keys, None left out."""
    return {camel(key): value for key, value in fields.items() if value is not None}


def job(fields: Optional[Mapping[str, Any]]) -> Optional[Dict[str, Any]]:
    return None if fields is None else {camel(key): value for key, value in fields.items()}


def query(**fields: Any) -> str:
    params = [(camel(key), str(value)) for key, value in fields.items() if value is not None]
    return "" if not params else "?" + urlencode(params)


def segment(name: str, field: str) -> str:
    """A name as one URL path segment; a name that could address another route is refused."""
    if not isinstance(name, str) or not _NAME.match(name) or name in (".", ".."):
        raise InvalidRequestError(
            f"{field} must be 1 to 256 characters of A-Z a-z 0-9 . _ : / @ - "
            f"(and not . or ..), got {name!r}",
            {"field": field},
        )
    return quote(name, safe="")
