"""The last checkpoint a saver wrote on each thread namespace, kept as stored, so that reading the
thread back (what LangGraph does as every run starts) costs one round trip: the store confirms
that checkpoint is still the newest and answers its pending writes in the same exchange, and
the channel values come from here instead of their blobs. Only LangGraph's own (uuid6) ids are
kept, whose name order is the store's newest-first; at most ``size`` threads, the least recently
written forgotten first.
"""

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

_UUID6 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-6[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$")


def is_uuid6(checkpoint_id: Any) -> bool:
    return bool(_UUID6.match(str(checkpoint_id)))


@dataclass(frozen=True)
class Recent:
    #: The checkpoint record as stored.
    stored: Dict[str, Any]
    #: Every versioned channel of the checkpoint and its version.
    versions: Dict[str, Any]
    #: The stored blobs of the channels that had a value, as far as this saver knows them.
    blobs: Dict[str, Dict[str, str]]
    #: The channels with a value whose blob this saver did not write: read from the store.
    missing: List[Tuple[str, Any]]


class RecentCheckpoints:
    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._entries: "OrderedDict[Tuple[str, str], Recent]" = OrderedDict()
        self._lock = threading.Lock()

    def remember(
        self,
        scope: str,
        stored: Dict[str, Any],
        versions: Dict[str, Any],
        written: Dict[str, Dict[str, str]],
    ) -> None:
        """After a put: ``written`` the blobs it wrote (new versions with a value)."""
        key = (scope, stored["ns"])
        with self._lock:
            if not is_uuid6(stored["id"]):
                self._entries.pop(key, None)
                return
            previous = self._entries.get(key)
            empty = set(stored.get("empty") or ())
            blobs: Dict[str, Dict[str, str]] = {}
            missing: List[Tuple[str, Any]] = []
            for channel, version in versions.items():
                if channel in empty:
                    continue
                if channel in written:
                    blobs[channel] = written[channel]
                elif (
                    previous is not None
                    and previous.versions.get(channel) == version
                    and channel in previous.blobs
                ):
                    blobs[channel] = previous.blobs[channel]
                else:
                    missing.append((channel, version))
            self._entries[key] = Recent(stored, dict(versions), blobs, missing)
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def recall(self, scope: str, namespace: str) -> Optional[Recent]:
        with self._lock:
            return self._entries.get((scope, namespace))

    def forget(self, scope: str, namespace: Optional[str] = None) -> None:
        with self._lock:
            for key in [k for k in self._entries if k[0] == scope and namespace in (None, k[1])]:
                del self._entries[key]
