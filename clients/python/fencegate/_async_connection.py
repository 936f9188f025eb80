"""One keep-alive HTTP/1.1 connection of the asynchronous client, as an asyncio protocol.

It carries one exchange at a time: the request is written, and its answer read from the bytes as
they arrive (_answer_reader.py: interim answers skipped, the body bounded) and handed to the
future waiting for it. A protocol does in one callback what stream readers do in a chain of
coroutines (read a line, read the head, read the body, each under its own timeout), which on a
machine where every exchange counts is most of the client's own time per request.

An exchange that breaks, passes its deadline or gets what is not HTTP fails with a LOST
``TransportError``: its request was written, so it may have reached the server. Failing the
waiting future comes first, so whatever happens to the transport after (its event loop closed)
nobody waits forever.
"""

import asyncio
from typing import Callable, Optional

from ._answer_reader import AnswerReader, AnswerTooLong
from ._wire import LOST, Reply, TransportError, reply_of, too_long


class Connection(asyncio.Protocol):
    def __init__(self) -> None:
        self._transport: Optional[asyncio.Transport] = None
        self._closed = False
        self._answer: "Optional[asyncio.Future[Reply]]" = None
        self._reader: Optional[AnswerReader] = None
        self._timer: Optional[asyncio.TimerHandle] = None
        #: Set by whoever keeps the connection between exchanges: it carried one before, and
        #: has been idle since that loop time.
        self.reused = False
        self.idle_since = 0.0

    # What the caller uses

    def usable(self) -> bool:
        """Open at both ends and between exchanges: an idle connection the server closed (its
        keep-alive timeout) is dropped rather than reused."""
        return not self._closed and self._answer is None and self._transport is not None

    def exchange(
        self, request: bytes, deadline: float, timeout: float, max_bytes: int, tunnel: bool = False
    ) -> "asyncio.Future[Reply]":
        """Writes ``request``; the future answers it by the loop time ``deadline`` (``timeout``
        names it in the error). ``tunnel``: a CONNECT, whose 2xx answer has no body."""
        assert self._transport is not None and self._answer is None
        loop = asyncio.get_running_loop()
        self._answer = loop.create_future()
        self._reader = AnswerReader(max_bytes, tunnel)
        self._timer = loop.call_at(deadline, self._timed_out, timeout)
        self._transport.write(request)
        return self._answer

    def transport(self) -> asyncio.Transport:
        assert self._transport is not None
        return self._transport

    def use_transport(self, transport: asyncio.Transport) -> None:
        """The TLS transport that now carries the connection (after a proxy's tunnel)."""
        self._transport = transport

    def close(self) -> None:
        self._closed = True
        if self._transport is not None:
            _unless_loop_closed(self._transport.close)

    def abort(self, error: BaseException) -> None:
        """Ends the connection; the answer awaited, if any, fails with ``error``."""
        self._closed = True
        self._fail(error)
        if self._transport is not None:
            _unless_loop_closed(self._transport.abort)

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        reader = self._reader
        if reader is None:
            # Bytes nobody asked for: the connection can no longer be trusted.
            self.abort(TransportError(LOST, "the server sent more than was asked"))
            return
        try:
            answer = reader.feed(data)
        except AnswerTooLong as long:
            # The rest is not read: the connection goes, with whatever of it is still coming.
            self._deliver(too_long(long.status, long.content_type, long.max_bytes))
            self.abort(TransportError(LOST, "the answer was too long"))
            return
        except (ValueError, IndexError) as error:
            self.abort(TransportError(LOST, f"the answer is not HTTP ({error})"))
            return
        if answer is not None:
            self._deliver(
                reply_of(answer.status, answer.body, answer.content_type, answer.retry_after)
            )
            if not answer.reusable:
                self.close()

    def eof_received(self) -> Optional[bool]:
        self._closed = True
        reader = self._reader
        answer = reader.at_close() if reader is not None else None
        if answer is not None:
            # An answer without a length ends when the server closes the connection.
            self._deliver(
                reply_of(answer.status, answer.body, answer.content_type, answer.retry_after)
            )
        self._fail(self._ended("the server closed the connection"))
        return False

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self._closed = True
        reason = f"the connection failed ({exc})" if exc else "the server closed the connection"
        self._fail(self._ended(reason))

    # The end of an exchange

    def _ended(self, reason: str) -> TransportError:
        started = self._reader is not None and self._reader.started
        return TransportError(LOST, reason, unanswered=not started)

    def _deliver(self, reply: Reply) -> None:
        answer = self._answer
        self._disarm()
        self._answer, self._reader = None, None
        if answer is not None and not answer.done():  # its caller may have stopped waiting
            answer.set_result(reply)

    def _timed_out(self, timeout: float) -> None:
        self._timer = None
        self.abort(TransportError(LOST, f"no answer within {timeout} s"))

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _fail(self, error: BaseException) -> None:
        answer = self._answer
        self._disarm()
        self._answer, self._reader = None, None
        if answer is not None and not answer.done():
            answer.set_exception(error)


def _unless_loop_closed(end: Callable[[], None]) -> None:
    """Runs a transport's close or abort; on a closed event loop there is nothing left to do
    (asyncio raises "Event loop is closed"), and the socket goes with the transport."""
    try:
        end()
    except RuntimeError:
        pass
