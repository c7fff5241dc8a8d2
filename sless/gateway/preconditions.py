"""Optimistic concurrency: ``resource_version``, ``ETag`` and ``If-Match``.

Every object (function, trigger, job, secret) carries a ``resource_version``: in embedded
mode a number from one PostgreSQL sequence that every write of the row takes anew (the
migration's trigger); in Kubernetes mode the custom resource's ``metadata.resourceVersion``.
It changes on *any* write, status included, as in Kubernetes. ``GET`` and ``PUT`` answer
with it as a strong ``ETag`` (``"<resource_version>"``).

``PUT`` and ``DELETE`` with ``If-Match: "<v>"`` (or a list, or ``*``) write only when the
object's current version is one of them (``*``: when the object exists), else 412
``precondition_failed``. Without ``If-Match`` they write as before. The check and the write
run under the tenant's write lock (``Quotas.guard``, a PostgreSQL advisory lock held by
every gateway process), so of two clients racing with the same version exactly one wins.
A weak tag (``W/"…"``) never matches (RFC 9110 section 13.1.1: If-Match compares strongly);
a value that is not an entity-tag list is a 400.
"""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import Depends, Header, Response

from sless.errors import BadRequest, PreconditionFailed

#: one entity-tag: optional W/, then a quoted string of etagc characters (RFC 9110 8.8.3)
_TAG = re.compile(r'\s*(W/)?"([\x21\x23-\x7e]*)"\s*')
MAX_IF_MATCH_CHARS = 1024


class IfMatch:
    """A parsed ``If-Match``: any (``*``) or the strong versions it names."""

    def __init__(self, any_version: bool, versions: frozenset[str]) -> None:
        self.any_version = any_version
        self.versions = versions

    def check(self, current: str | None) -> None:
        """Raise 412 unless the object's ``current`` version (None: missing) matches."""
        if current is None:
            raise PreconditionFailed("If-Match: the object does not exist")
        if not self.any_version and current not in self.versions:
            raise PreconditionFailed(
                "If-Match: the object changed since that version; read it again"
            )


def parse_if_match(value: str | None) -> IfMatch | None:
    if value is None:
        return None
    if len(value) > MAX_IF_MATCH_CHARS:
        raise BadRequest("If-Match is too long")
    if value.strip() == "*":
        return IfMatch(True, frozenset())
    versions: set[str] = set()
    for part in value.split(","):
        match = _TAG.fullmatch(part)
        if match is None:
            raise BadRequest('If-Match must be "*" or entity tags such as "42" (quotes included)')
        if match.group(1) is None:  # weak tags never match strongly
            versions.add(match.group(2))
    return IfMatch(False, frozenset(versions))


def if_match_header(
    if_match: Annotated[
        str | None,
        Header(
            alias="If-Match",
            description='"<resource_version>" from an ETag: write only if it is still current',
        ),
    ] = None,
) -> IfMatch | None:
    return parse_if_match(if_match)


IfMatchDep = Annotated[IfMatch | None, Depends(if_match_header)]


def etag(resource_version: str | None) -> str | None:
    return f'"{resource_version}"' if resource_version is not None else None


def set_etag(response: Response, resource_version: str | None) -> None:
    tag = etag(resource_version)
    if tag is not None:
        response.headers["ETag"] = tag
