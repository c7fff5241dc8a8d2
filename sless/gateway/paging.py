"""Cursor paging for every list of the API.

A list answers ``{"<items>": [...], "count": <page size>, "next_cursor": <str | null>}``
and takes ``?limit=`` (1..1000, default 100) and ``?cursor=``. Pages are keyset pages: the
cursor holds the sort key of the last row served (a name, an id, or ``(started_at, id)``),
never an offset, so walking every page while rows are added returns each row that existed
when the walk began exactly once.

A cursor is ``base64url(payload) "." base64url(mac)``: the payload is the position and the
time it was issued; the MAC is HMAC-SHA256 over the *scope* and the payload with the
platform's signing key. The scope names the list, the caller's namespace (or the provider
admin) and the list's filters, and it is not in the cursor: a cursor handed to another
tenant, to another list or with other filters fails its MAC and answers 400, the same
answer as a cursor altered by hand. A cursor older than ``gateway.cursor_ttl_s`` answers
400 too. Nothing about other tenants is ever in a cursor or in the error.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Query

from sless.errors import BadRequest

MAX_LIMIT = 1000
DEFAULT_LIMIT = 100
#: a cursor is short; anything longer is not one of ours
MAX_CURSOR_CHARS = 2048


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Cursors:
    """Signs and checks cursors with one key."""

    def __init__(
        self, key: bytes, *, ttl_s: float = 24 * 3600, clock: Callable[[], float] = time.time
    ) -> None:
        self._key = hashlib.sha256(b"sless cursor\0" + key).digest()
        self.ttl_s = ttl_s
        self._clock = clock

    def _mac(self, scope: str, payload: bytes) -> bytes:
        return hmac.new(self._key, scope.encode() + b"\0" + payload, hashlib.sha256).digest()

    def encode(self, scope: str, position: Sequence[Any]) -> str:
        payload = json.dumps(
            {"p": list(position), "t": int(self._clock())}, separators=(",", ":")
        ).encode()
        return f"{_b64(payload)}.{_b64(self._mac(scope, payload))}"

    def decode(self, scope: str, cursor: str) -> list[Any]:
        """The position in ``cursor``; ``BadRequest`` for anything not issued for ``scope``."""
        invalid = BadRequest("invalid cursor: pass the next_cursor of the previous page as is")
        body, dot, mac = cursor.partition(".")
        if not dot or len(cursor) > MAX_CURSOR_CHARS:
            raise invalid
        try:
            payload, given = _unb64(body), _unb64(mac)
        except (binascii.Error, ValueError):
            raise invalid from None
        if not hmac.compare_digest(given, self._mac(scope, payload)):
            raise invalid
        try:
            data = json.loads(payload)
            position, issued = data["p"], float(data["t"])
        except (ValueError, KeyError, TypeError):
            raise invalid from None
        if not isinstance(position, list):
            raise invalid
        if self._clock() - issued > self.ttl_s:
            raise BadRequest("expired cursor: start again from the first page")
        return position


@dataclass(frozen=True)
class PageParams:
    limit: int
    cursor: str | None


def page_params(
    limit: Annotated[
        int, Query(ge=1, le=MAX_LIMIT, description=f"page size, 1..{MAX_LIMIT}")
    ] = DEFAULT_LIMIT,
    cursor: Annotated[
        str | None,
        Query(max_length=MAX_CURSOR_CHARS, description="the next_cursor of the previous page"),
    ] = None,
) -> PageParams:
    return PageParams(limit=limit, cursor=cursor or None)


PageDep = Annotated[PageParams, Depends(page_params)]


def scope(kind: str, owner: str | None, **filters: Any) -> str:
    """What a cursor is bound to: the list, its owner (namespace or admin) and filters."""
    canonical = json.dumps(
        {k: str(v) for k, v in sorted(filters.items()) if v is not None}, separators=(",", ":")
    )
    return f"{kind}\0{owner if owner is not None else '@admin'}\0{canonical}"


@dataclass(frozen=True)
class Pager:
    """One list's paging: the cursor codec, the scope and the caller's page parameters."""

    cursors: Cursors
    scope: str
    params: PageParams

    def position(self) -> list[Any] | None:
        if self.params.cursor is None:
            return None
        return self.cursors.decode(self.scope, self.params.cursor)

    def page(
        self, key: str, rows: list[Any], position_of: Callable[[Any], Sequence[Any]]
    ) -> dict[str, Any]:
        """The response for ``rows`` fetched with ``limit + 1``: the extra row says whether
        there is a next page; the cursor holds the last served row's position."""
        more = len(rows) > self.params.limit
        rows = rows[: self.params.limit]
        next_cursor = (
            self.cursors.encode(self.scope, position_of(rows[-1])) if more and rows else None
        )
        return {key: rows, "count": len(rows), "next_cursor": next_cursor}

    def page_by_name(
        self, key: str, items: Sequence[Any], name_of: Callable[[Any], str]
    ) -> tuple[list[Any], dict[str, Any]]:
        """Page a complete list kept in memory (a backend's list), in name order.

        Names are unique in a list, so ``name > last`` is a keyset. ``total`` is exact and
        cheap here: the whole list was read anyway. Returns the page's items (to render)
        and the paging fields.
        """
        position = self.position()
        ordered = sorted(items, key=name_of)
        if position:
            after = str(position[0])
            ordered = [i for i in ordered if name_of(i) > after]
        page = self.page(key, ordered[: self.params.limit + 1], lambda i: [name_of(i)])
        fields = {k: v for k, v in page.items() if k != key}
        fields["total"] = len(items)
        return page[key], fields


@dataclass(frozen=True)
class Pagers:
    """The paging of every list, its cursors signed with the one key (``Cursors``)."""

    cursors: Cursors

    def of(self, kind: str, owner: str | None, params: PageParams, **filters: object) -> Pager:
        """The paging of one list, bound to its owner (a namespace; None: the admin)."""
        return Pager(self.cursors, scope(kind, owner, **filters), params)
