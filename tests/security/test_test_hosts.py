"""The test hosts of ``tests/netns.py`` answer, and never start a connection.

The rule: test traffic goes only to loopback or into namespaces the test makes. The near
end of a test host's veth pair is an address of the machine's own namespace; the guard
inside the test host drops any packet that is not a reply, so nothing in a test host can
reach that address (or anything else): a connection attempt from inside is dropped before
it leaves the namespace (the guard's counter shows it), while a connection from this side
to a server inside is answered.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading

import pytest

from tests.netns import TestHost, guard_drops

pytestmark = pytest.mark.integration

NEAR = "10.254.7.1"
FAR = "10.254.7.2"


def test_a_test_host_answers_but_never_connects_out() -> None:
    if os.geteuid() != 0:
        pytest.fail("building a test host (ip netns, nft) needs root")
    host = TestHost(NEAR, FAR)
    try:
        # from this side to a server inside: answered (replies pass the guard)
        server = host.listen()
        port = server.getsockname()[1]

        def serve() -> None:
            conn, _ = server.accept()
            with conn:
                conn.sendall(conn.recv(16).upper())

        thread = threading.Thread(target=serve)
        thread.start()
        with socket.create_connection((FAR, port), timeout=30) as client:
            client.sendall(b"ping")
            assert client.recv(16) == b"PING"
        thread.join(timeout=30)
        server.close()
        assert guard_drops(host.namespace) == 0

        # from inside to the near end: the SYN is dropped inside the namespace, so no
        # packet reaches the machine's address (nothing listens there either)
        probe = (
            "import socket, sys\n"
            "try:\n"
            f"    socket.create_connection(({NEAR!r}, 9), timeout=1)\n"
            "except OSError as e:\n"
            "    print(type(e).__name__)\n"
            "    sys.exit(0)\n"
            "sys.exit(1)\n"
        )
        result = subprocess.run(
            host.command(sys.executable, "-c", probe), capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 0, result
        # dropped, not refused by the machine (a refusal would be ConnectionRefusedError)
        assert result.stdout.strip() == "TimeoutError", result
        assert guard_drops(host.namespace) >= 1
    finally:
        host.remove()
