"""The Kubernetes API client of sless: one client, one error family, for the gateway's
Kubernetes backend and the operator alike (``client.py`` says why not the generated one)."""

from sless.kube.client import (
    JSON,
    JSON_PATCH,
    MERGE_PATCH,
    AlreadyExists,
    ApiAnswer,
    Forbidden,
    Gone,
    KubeApi,
    answer_of,
    bearer_token,
    collection_path,
    load_configuration,
    object_path,
    path_of,
)

__all__ = [
    "JSON",
    "JSON_PATCH",
    "MERGE_PATCH",
    "AlreadyExists",
    "ApiAnswer",
    "Forbidden",
    "Gone",
    "KubeApi",
    "answer_of",
    "bearer_token",
    "collection_path",
    "load_configuration",
    "object_path",
    "path_of",
]
