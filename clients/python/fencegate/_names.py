"""Foreign identifiers (task ids, thread ids, namespaces) as pieces of fencegate names, reversibly,
the way the TypeScript integrations escape them (src/integrations/name-escape.ts).

``[A-Za-z0-9._:-]`` stays as it is, so ids made of it (uuids, numbers) keep their order; every
other byte of the UTF-8 form becomes ``@`` and two hex digits. ``/`` is escaped too, which leaves
it free to separate the pieces of a name.

A name made of pieces may come out longer than the 256 characters fencegate allows; ``fit_name``
shortens it so that two long names never come out the same, and a shortened name never equals one
that was not shortened.
"""

import hashlib
import re

#: The longest name fencegate accepts (scopes, records, holders, operation ids, job ids).
NAME_LIMIT = 256
#: Hex digits of the sha256 of a name that ends its shortened form.
_DIGEST_CHARS = 32
#: Sits between a shortened name's start and its digest. ``escape_name`` never writes it: its
#: ``@`` is always followed by two hex digits.
_SHORTENED_MARK = "@-"
_SHORTENED_END = re.compile(f"{_SHORTENED_MARK}[0-9a-f]{{{_DIGEST_CHARS}}}$")

_ALL_KEPT = re.compile(r"[A-Za-z0-9._:-]*")
_NOT_KEPT = re.compile(r"[^A-Za-z0-9._:-]")


def escape_name(piece: str) -> str:
    # Most pieces (uuids, numbers, channel names) need no escape: one match instead of one a char.
    if _ALL_KEPT.fullmatch(piece):
        return piece
    return _NOT_KEPT.sub(_escaped, piece)


def _escaped(found: "re.Match[str]") -> str:
    return "".join(f"@{byte:02X}" for byte in found.group().encode("utf-8"))


def unescape_name(piece: str) -> str:
    data = bytearray()
    index = 0
    while index < len(piece):
        if piece[index] == "@":
            data.append(int(piece[index + 1 : index + 3], 16))
            index += 3
        else:
            data.extend(piece[index].encode("ascii"))
            index += 1
    return data.decode("utf-8")


def fit_name(name: str, limit: int = NAME_LIMIT) -> str:
    """``name`` itself when it has at most ``limit`` characters; else its start, ``@-`` and a
    digest of all of it, ``limit`` characters in all: a plain cut would give two long names that
    start alike one name, so that two tasks would share a scope, a holder or an operation id.

    A name that already ends as a shortened one (``@-`` and the digest's hex digits: only a piece
    not made by ``escape_name`` can hold it) is shortened too, however short: a name that fits
    could otherwise equal the shortened form of a longer one. The TypeScript ``fitName`` is the
    same rule (test/fixtures/fit-name-vectors.json holds both languages' vectors)."""
    if len(name) <= limit and _SHORTENED_END.search(name) is None:
        return name
    start = name[: limit - len(_SHORTENED_MARK) - _DIGEST_CHARS]
    return f"{start}{_SHORTENED_MARK}{_digest(name)}"


def fit_name_unmarked(name: str, limit: int = NAME_LIMIT) -> str:
    """How names were shortened before ``fit_name`` marked them: the start, ``-`` and the digest.
    Only to find what a task stored under such a name before the upgrade."""
    if len(name) <= limit:
        return name
    return f"{name[: limit - _DIGEST_CHARS - 1]}-{_digest(name)}"


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:_DIGEST_CHARS]
