"""A Spark server (Connect, Thrift) run for as long as a benchmark or a test needs it: started
from a command, up once it listens on 127.0.0.1 (a bounded wait), stopped by its pid."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

__all__ = ["serving"]

# A Spark server's JVM start, on a busy 2-core machine, stays well under this.
_LISTEN_WITHIN_S = 300


@contextlib.contextmanager
def serving(
    command: Sequence[str], port: int, folder: Path, env: Mapping[str, str]
) -> Iterator[Path]:
    """Run the server ``command`` in ``folder`` with ``env`` (its log: ``server.log`` there)
    until it listens on 127.0.0.1:``port``; stop it by its pid on leaving.

    Raises:
        RuntimeError: the server exited, or did not listen in time (with its log's end).
    """
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "server.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            list(command), stdout=out, stderr=subprocess.STDOUT, env=dict(env), cwd=folder
        )
    try:
        deadline = time.monotonic() + _LISTEN_WITHIN_S
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"the server exited: {log.read_text()[-3000:]}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"the server did not listen within {_LISTEN_WITHIN_S} s: "
                        f"{log.read_text()[-3000:]}"
                    ) from None
                time.sleep(0.5)
        yield log
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=30)
