"""The bearer token handed to kopf's login: whatever case the scheme is written in (the
in-cluster loader writes ``bearer <token>``, kubeconfigs ``Bearer <token>``)."""

from __future__ import annotations

import pytest
from kubernetes import client

from sless.kube import bearer_token


@pytest.mark.parametrize("value", ["bearer abc.def", "Bearer abc.def", "BEARER  abc.def "])
def test_the_scheme_is_stripped_in_any_case(value: str) -> None:
    cfg = client.Configuration()
    cfg.api_key = {"authorization": value}
    assert bearer_token(cfg) == "abc.def"


def test_no_token_is_none() -> None:
    assert bearer_token(client.Configuration()) is None
