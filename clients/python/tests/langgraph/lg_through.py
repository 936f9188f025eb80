"""One test body for both halves of the saver: ``Through(saver, "async")`` awaits the a-methods,
``Through(saver, "sync")`` runs the synchronous ones (with the synchronous client) in a thread."""

import asyncio
from typing import Any, List, Optional


class Through:
    def __init__(self, saver: Any, api: str) -> None:
        self.saver = saver
        self.api = api

    async def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self.api == "async":
            return await getattr(self.saver, "a" + name)(*args, **kwargs)
        return await asyncio.to_thread(getattr(self.saver, name), *args, **kwargs)

    async def put(self, config: Any, checkpoint: Any, metadata: Any, versions: Any) -> Any:
        return await self._call("put", config, checkpoint, metadata, versions)

    async def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        await self._call("put_writes", config, writes, task_id, task_path)

    async def get_tuple(self, config: Any) -> Any:
        return await self._call("get_tuple", config)

    async def list(self, config: Any, **options: Any) -> List[Any]:
        if self.api == "async":
            return [item async for item in self.saver.alist(config, **options)]
        return await asyncio.to_thread(lambda: list(self.saver.list(config, **options)))

    async def delete_thread(self, thread_id: str) -> None:
        await self._call("delete_thread", thread_id)

    async def close(self) -> None:
        if self.api == "async":
            await self.saver.aclose()
        else:
            await asyncio.to_thread(self.saver.close)

    async def claim(self, thread_id: str) -> "Through":
        return Through(await self._call("claim_write_ownership", thread_id), self.api)

    async def ids(self, thread_id: str, namespace: Optional[str] = "") -> List[str]:
        configurable = {"thread_id": thread_id}
        if namespace is not None:
            configurable["checkpoint_ns"] = namespace
        return [t.checkpoint["id"] for t in await self.list({"configurable": configurable})]

    async def tip(self, thread_id: str) -> Optional[str]:
        found = await self.get_tuple(
            {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        )
        return None if found is None else found.checkpoint["id"]
