"""Where completed reviews are kept, by (code sha256, model, prompt version).

The cache only saves work: when it fails, the upload is reviewed again rather than failed.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any, NamedTuple, Protocol

from sless.validation.report import StageResult

logger = logging.getLogger(__name__)


class ReviewKey(NamedTuple):
    code_sha256: str
    model: str
    prompt_version: str


class ReviewCache(Protocol):
    """Where completed reviews are kept. Only ``status == "ok"`` results are put."""

    async def get(self, key: ReviewKey) -> StageResult | None: ...

    async def put(self, key: ReviewKey, result: StageResult) -> None: ...


class MemoryReviewCache:
    """An in-process :class:`ReviewCache`, least recently used entries evicted first."""

    def __init__(self, max_entries: int = 4096) -> None:
        self._max_entries = max_entries
        self._entries: OrderedDict[ReviewKey, StageResult] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    async def get(self, key: ReviewKey) -> StageResult | None:
        result = self._entries.get(key)
        if result is None:
            return None
        self._entries.move_to_end(key)
        return result.model_copy(deep=True)

    async def put(self, key: ReviewKey, result: StageResult) -> None:
        self._entries[key] = result.model_copy(deep=True)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)


class ReviewStore(Protocol):
    """Where reviews are kept as JSON (``sless.store.LLMReviewRepository``)."""

    async def get(self, sha256: str, model: str, prompt_version: str) -> dict[str, Any] | None: ...

    async def put(
        self, sha256: str, model: str, prompt_version: str, result: dict[str, Any]
    ) -> None: ...


class StoredReviewCache:
    """A :class:`ReviewCache` kept in a :class:`ReviewStore` (PostgreSQL in the gateway,
    shared by every gateway). The store is below validation and keeps JSON; the results
    are read and written as :class:`StageResult` here."""

    def __init__(self, store: ReviewStore) -> None:
        self.store = store

    async def get(self, key: ReviewKey) -> StageResult | None:
        found = await self.store.get(key.code_sha256, key.model, key.prompt_version)
        return StageResult.model_validate(found) if found is not None else None

    async def put(self, key: ReviewKey, result: StageResult) -> None:
        await self.store.put(
            key.code_sha256, key.model, key.prompt_version, result.model_dump(mode="json")
        )


async def cache_get(cache: ReviewCache, key: ReviewKey) -> StageResult | None:
    # The cache only saves work: when it fails, review again rather than fail the upload.
    try:
        return await cache.get(key)
    except Exception as e:
        logger.warning("LLM review cache read failed (%s); reviewing", type(e).__name__)
        return None


async def cache_put(cache: ReviewCache, key: ReviewKey, result: StageResult) -> None:
    try:
        await cache.put(key, result)
    except Exception as e:
        logger.warning("LLM review cache write failed (%s)", type(e).__name__)
