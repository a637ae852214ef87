"""Run by tests/datasource/test_name_clash.py in a fresh process: a session whose classpath
holds another data source registering the short name ``tsfile`` (a jar the test compiles),
and what ``local_session`` (``register``) says about it."""

from __future__ import annotations

import sys

import tsfile_catalog


def main(jar: str) -> None:
    try:
        spark = tsfile_catalog.local_session(
            "name-clash", master="local[1]", config={"spark.jars": jar}
        )
        print("REGISTER ok")
        spark.stop()
    except Exception as e:  # noqa: BLE001 - printed for the test to check
        print("REGISTER", type(e).__name__, str(e).replace("\n", "\\n"))


if __name__ == "__main__":
    main(sys.argv[1])
