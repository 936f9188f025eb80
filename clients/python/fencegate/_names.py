"""Foreign identifiers (task ids, thread ids, namespaces) as pieces of fencegate names, reversibly,
the way the TypeScript integrations escape them (src/integrations/name-escape.ts).

``[A-Za-z0-9._:-]`` stays as it is, so ids made of it (uuids, numbers) keep their order; every
other byte of the UTF-8 form becomes ``@`` and two hex digits. ``/`` is escaped too, which leaves
it free to separate the pieces of a name.
"""

import re

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
