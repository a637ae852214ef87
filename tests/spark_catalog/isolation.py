"""Row changes through each front end, as the isolation test races them in two processes.

Each function runs one statement on table ``db.<name>`` of a plugin catalog and answers how
many increments it made (``v = v + 1`` on that many rows) when it was acknowledged, or None
when it was refused with a commit conflict. Any other error is raised: the test fails on it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

import pyarrow.compute as pc

from tsfile_catalog import Catalog, open_table
from tsfile_catalog.exceptions import CommitConflictError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

T = TypeVar("T")
Front = Literal["sql", "catalog", "api"]
FRONTS: tuple[Front, ...] = ("sql", "catalog", "api")


class Racer:
    """One process's front ends: ``spark.sql`` on catalog ``name``, ``Catalog.sql``'s own
    implementation over the same warehouse, and the Spark-free ``Table`` API on the table's
    location.

    ``Catalog.sql`` hands the statements of a warehouse the plugin serves to ``spark.sql``
    (the ``sql`` front already); over a symbolic link to the warehouse, a location no
    plugin catalog names, it carries them out itself."""

    def __init__(self, spark: SparkSession, catalog: str, warehouse: str) -> None:
        self.spark = spark
        self.catalog = catalog
        link = Path(f"{warehouse.rstrip('/')}_unserved")
        try:
            link.symlink_to(warehouse, target_is_directory=True)
        except FileExistsError:
            pass  # the other process made it
        self.sql_catalog = Catalog(spark, str(link))
        assert self.sql_catalog._tables.plugin() is None

    def location(self, table: str) -> str:
        """The table's location, as ``DESCRIBE TABLE EXTENDED`` shows it to a user."""
        described = self.spark.sql(f"DESCRIBE TABLE EXTENDED {self.catalog}.db.{table}")
        return next(r.data_type for r in described.collect() if r.col_name == "Location")

    def increment(self, front: Front, table: str, where: str) -> int | None:
        """``UPDATE ... SET v = v + 1 WHERE <where>``."""
        if front == "api":
            return _refused_or(
                lambda: (
                    open_table(self.location(table))
                    .update({"v": pc.field("v") + 1}, where=where)
                    .num_updated_rows
                )
            )
        return self._statement(front, f"UPDATE {{}} SET v = v + 1 WHERE {where}", table)

    def upsert(self, front: Front, table: str, dev: str) -> int | None:
        """``MERGE``: ``v = v + 1`` of key (``dev``, 1), inserted with 1 when absent; the
        Table API has no MERGE, so it increments (no row, no increment)."""
        if front == "api":
            return self.increment(front, table, f"dev = '{dev}' AND time = 1")
        merge = (
            f"MERGE INTO {{}} AS t USING (SELECT 1L AS time, '{dev}' AS dev) AS s "
            "ON t.time = s.time AND t.dev = s.dev "
            "WHEN MATCHED THEN UPDATE SET v = t.v + 1 "
            "WHEN NOT MATCHED THEN INSERT (time, dev, v) VALUES (s.time, s.dev, 1)"
        )
        done = self._statement(front, merge, table)
        return None if done is None else 1

    def delete(self, front: Front, table: str, where: str) -> int | None:
        """``DELETE ... WHERE <where>``: 1 when acknowledged."""
        if front == "api":
            try:
                open_table(self.location(table)).delete(where=where)
            except CommitConflictError:
                return None
            return 1
        return self._statement(front, f"DELETE FROM {{}} WHERE {where}", table, count=False)

    def _statement(self, front: Front, text: str, table: str, count: bool = True) -> int | None:
        if front == "catalog":
            frame = _refused_or(lambda: self.sql_catalog.sql(text.format(f"db.{table}")))
            if frame is None:
                return None
            rows = frame.collect()
            return int(rows[0][0]) if count and rows else 1
        try:
            self.spark.sql(text.format(f"{self.catalog}.db.{table}")).collect()
        except Exception as e:  # Spark wraps the Python commit's error
            if "CommitConflictError" in str(e):
                return None
            raise
        return 1


def _refused_or(run: Callable[[], T]) -> T | None:
    try:
        return run()
    except CommitConflictError:
        return None
