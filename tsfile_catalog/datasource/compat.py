"""The PySpark versions this package runs on: the floor, and the check that enforces it.

Below the Spark session helpers and the data source alike, so both can refuse an old PySpark
(:func:`~tsfile_catalog.session.register` when it registers the source, the source when
Spark discovers it without ``register``) without importing each other.
"""

from __future__ import annotations

from tsfile_catalog.exceptions import TsFileCatalogError

__all__ = ["MIN_PYSPARK", "check_pyspark_version"]

MIN_PYSPARK = (4, 2)
"""The oldest PySpark minor supported: the floor pyproject.toml declares and CI tests (the
README's support matrix). Streaming needs it (admission control in Python stream readers
arrived in 4.2); nothing older is tested."""


def check_pyspark_version(version: str) -> None:
    """Refuse a PySpark older than :data:`MIN_PYSPARK`, naming both versions.

    pip enforces the floor on install; this catches a session whose PySpark came some other
    way (a cluster image, an install with ``--no-deps``) before anything subtler fails.
    """
    try:
        found = tuple(int(n) for n in version.split(".")[:2])
    except ValueError:
        return  # a development build ("4.3.0.dev1" parses; "master" does not): let it run
    if found < MIN_PYSPARK:
        floor = ".".join(map(str, MIN_PYSPARK))
        raise TsFileCatalogError(
            f"tsfile-catalog needs PySpark >= {floor}, but this session runs PySpark "
            f"{version}: upgrade it (pip install 'pyspark>={floor}')"
        )
