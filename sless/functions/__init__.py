"""The function lifecycle: uploading, versioning, reviewing, rolling back, traffic.

Below the gateway and above the backends: every entry point (the HTTP routers today)
calls these use cases, which take :class:`FunctionServices` (the few services they touch)
rather than the gateway's ``Platform``. Which code may serve is decided in one place
(``FunctionServices.gate``, the ``sless.store.CodeGate`` over the versions table, applying
the pure rule of ``sless.models.admission``); the backends ask the same gate before they
build or start a version.

- :mod:`~sless.functions.uploading`: a zip in, validated, stored, made the next version;
- :mod:`~sless.functions.specifying`: a spec created or replaced (a new version when
  what runs changed);
- :mod:`~sless.functions.versioning`: versions of a spec change, rollback, the traffic
  split, pruning and collecting code;
- :mod:`~sless.functions.reviewing`: a provider's decision on a held upload.
"""

from sless.functions import reviewing, specifying, uploading, versioning
from sless.functions.services import FunctionServices

__all__ = ["FunctionServices", "reviewing", "specifying", "uploading", "versioning"]
