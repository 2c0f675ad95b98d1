"""An asyncio TCP proxy that puts faults between a service and NATS or Redis.

``FaultProxy(host, port)`` listens on a free port of 127.0.0.1 and forwards
each connection to the target. Faults apply to every connection, new and
open, until cleared:

* ``delay_s``: each chunk is forwarded that much later (both ways; order kept);
* ``bandwidth_bps``: bytes per second, each direction of each connection;
* ``blackhole``: bytes are read and dropped, nothing is forwarded or answered
  (connections stay open: the peer sees silence, as with a lost route); when
  it ends, a connection that lost bytes is reset, as TCP gives up on it;
* ``close_after_bytes``: a connection is closed once it has carried that many
  bytes (both directions together), mid-message if it falls there;
* ``drop_all()``: every open connection is closed now (both sides).

``clear()`` removes every fault. Counters (``connections``, ``bytes``) show
what went through.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field

_CHUNK = 64 * 1024


@dataclass
class Faults:
    delay_s: float = 0.0
    bandwidth_bps: float | None = None
    blackhole: bool = False
    close_after_bytes: int | None = None


@dataclass(eq=False)
class _Link:
    client: asyncio.StreamWriter
    upstream: asyncio.StreamWriter | None = None
    carried: int = 0
    swallowed: bool = False  # lost bytes to a blackhole: reset once it ends
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    def close(self) -> None:
        for w in (self.client, self.upstream):
            if w is not None:
                with contextlib.suppress(Exception):
                    w.transport.abort()
        for t in self.tasks:
            t.cancel()


class FaultProxy:
    def __init__(self, target_host: str, target_port: int, *, host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.host = host
        self.port = 0
        self.faults = Faults()
        self.connections = 0
        self.bytes = 0
        self._links: set[_Link] = set()
        self._server: asyncio.Server | None = None

    # ------------------------------------------------------------ lifecycle
    async def start(self) -> FaultProxy:
        self._server = await asyncio.start_server(self._accept, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self.drop_all()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> FaultProxy:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def url(self, scheme: str, path: str = "") -> str:
        return f"{scheme}://{self.address}{path}"

    # --------------------------------------------------------------- faults
    def set(self, **faults: object) -> None:
        """Set some faults (the others keep their values)."""
        for k, v in faults.items():
            if not hasattr(self.faults, k):
                raise TypeError(f"no fault {k!r}")
            setattr(self.faults, k, v)
        self._reset_swallowed()

    def clear(self) -> None:
        self.faults = Faults()
        self._reset_swallowed()

    def _reset_swallowed(self) -> None:
        if not self.faults.blackhole:
            for link in [x for x in self._links if x.swallowed]:
                link.close()
                self._links.discard(link)

    def drop_all(self) -> None:
        """Close every open connection now, both sides."""
        for link in list(self._links):
            link.close()
        self._links.clear()

    # ----------------------------------------------------------- forwarding
    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        link = _Link(client=writer)
        self._links.add(link)
        try:
            while self.faults.blackhole:  # no route: swallow what the client sends
                if not await reader.read(_CHUNK):
                    return
                link.swallowed = True
            if link.swallowed:
                return
            try:
                up_reader, up_writer = await asyncio.open_connection(*self.target)
            except OSError:
                return
            link.upstream = up_writer
            link.tasks = [
                asyncio.create_task(self._pump(reader, up_writer, link)),
                asyncio.create_task(self._pump(up_reader, writer, link)),
            ]
            await asyncio.wait(link.tasks, return_when=asyncio.FIRST_COMPLETED)
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            link.close()
            self._links.discard(link)

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, link: _Link
    ) -> None:
        queue: asyncio.Queue[tuple[float, bytes] | None] = asyncio.Queue()
        sender = asyncio.create_task(self._send(queue, writer, link))
        try:
            while True:
                data = await reader.read(_CHUNK)
                if not data:
                    break
                if self.faults.blackhole:
                    link.swallowed = True
                    continue
                queue.put_nowait((time.monotonic() + self.faults.delay_s, data))
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            queue.put_nowait(None)
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await sender

    async def _send(
        self,
        queue: asyncio.Queue[tuple[float, bytes] | None],
        writer: asyncio.StreamWriter,
        link: _Link,
    ) -> None:
        while True:
            item = await queue.get()
            if item is None:
                return
            due, data = item
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            if self.faults.blackhole:
                link.swallowed = True
                continue
            limit = self.faults.close_after_bytes
            if limit is not None and link.carried + len(data) >= limit:
                writer.write(data[: max(0, limit - link.carried)])
                link.carried = limit
                link.close()
                return
            link.carried += len(data)
            self.bytes += len(data)
            bps = self.faults.bandwidth_bps
            if bps:
                for i in range(0, len(data), 4096):  # paced in small slices
                    writer.write(data[i : i + 4096])
                    await writer.drain()
                    await asyncio.sleep(min(len(data) - i, 4096) / bps)
            else:
                writer.write(data)
                await writer.drain()
