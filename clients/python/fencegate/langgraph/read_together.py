"""A checkpoint's reads (the newest checkpoint, its pending writes, channel values) in one
exchange: the server's ``POST /v1/scopes/:scope/reads`` answers pages and records together, so
reading a thread back as a run starts costs one request for the server, not one per read.

A server older than that route answers it ``not_found`` ("no route"); the reader then sends each
read on its own, together in one ``Gather`` (concurrent in the AsyncClient), for the rest of the
saver's life.
"""

from typing import Any, Dict, List, Sequence, Tuple

from ..errors import NotFoundError
from .saver_steps import Gather, SaverSteps, call

#: The server's bound on the reads of one request (a commit's bound), records and pages together.
MAX_READS = 64
#: The records one request may name: as many as the server's byte budget (1 MiB by default) holds
#: of the largest values (256 KiB).
MAX_NAMES = 4


class ReadTogether:
    def __init__(self) -> None:
        #: False once the server has said it has no route for reads together.
        self.supported = True

    def read(
        self, scope: str, pages: Sequence[Dict[str, Any]], names: Sequence[str]
    ) -> "SaverSteps[Tuple[List[Any], List[Any]]]":
        """The pages (``list_records_page`` arguments) and the records named, in order."""
        if self.supported:
            try:
                return (yield from _in_requests_of_max_reads(scope, pages, names))
            except NotFoundError as error:
                if not str(error.message).startswith("no route"):
                    raise
                self.supported = False
        results = yield Gather(
            tuple(call("list_records_page", scope, **page) for page in pages)
            + tuple(call("get_record", scope, name) for name in names)
        )
        return list(results[: len(pages)]), list(results[len(pages) :])


def _in_requests_of_max_reads(
    scope: str, pages: Sequence[Dict[str, Any]], names: Sequence[str]
) -> "SaverSteps[Tuple[List[Any], List[Any]]]":
    # The pages and as many records as fit go in the first request; further records in more,
    # all sent at once.
    first = max(0, min(MAX_NAMES, MAX_READS - len(pages)))
    batches = [list(names[:first])] + [
        list(names[start : start + MAX_NAMES]) for start in range(first, len(names), MAX_NAMES)
    ]
    calls = [call("read_records", scope, records=batches[0], pages=list(pages))] + [
        call("read_records", scope, records=batch) for batch in batches[1:]
    ]
    answers = yield (calls[0] if len(calls) == 1 else Gather(tuple(calls)))
    answers = [answers] if len(calls) == 1 else answers
    records = [record for answer in answers for record in answer.records]
    return list(answers[0].pages), records
