"""How a catalog write hands its rows to the TsFile writer: clustered by device.

A TsFile part stores one chunk per device per column, and the writer needs each part's rows in
(TAG, time) order. Handed a DataFrame as it comes, every Spark task writes a part holding a
slice of every device: many small tasks (each with a Python worker's fixed cost), many short
chunks per device (slower reads, see docs/benchmarks.md), and parts whose devices all overlap
(so a commit's cross-part key check reads them all). Clustered, rows are hash-partitioned by
the TAG columns (Spark's adaptive execution sizes the partitions): a device's rows go to one
task. This is what Iceberg's ``write.distribution-mode=hash`` and Delta's optimized writes do;
the catalog plugin asks Spark for the same through ``RequiresDistributionAndOrdering``.

Spark is not asked to sort: the writer orders each part's rows by (TAG, time) anyway
(``formats/tsfile/sort.py``, which no input order can get wrong), and what a shuffle hands a
task, each input partition's rows of a device together, it puts in place by moving whole runs
of rows, cheaper than Spark's sort of every row (bench/writes.py measures the write). A task
holding more than ``maxRowsPerFile`` rows writes several parts, each sorted; the order the
rows arrive in then decides which devices the parts share. The exception is ``keep_order``
(``onDuplicate=last``): the shuffle does not keep the frame's order among rows of one key, so
Spark sorts each partition on (TAG, time) and each row's position in the frame.

``spark.tsfile.write.clustered=false`` hands rows over as they come (and so does a DataFrame
written with ``df.write.format("tsfile")``, which no data source can repartition).
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from tsfile_catalog.exceptions import OptionError

__all__ = ["CLUSTERED_WRITES", "cluster_for_write", "clustered_writes"]

# Whether Catalog.sql's INSERT and CTAS, and the catalog plugin's writes, cluster rows by
# device before writing (default true).
CLUSTERED_WRITES = "spark.tsfile.write.clustered"


def clustered_writes(frame: DataFrame) -> bool:
    """Whether the session of ``frame`` leaves :data:`CLUSTERED_WRITES` on.

    Raises:
        OptionError: the conf is neither ``true`` nor ``false`` (naming it and the value).
    """
    value = str(frame.sparkSession.conf.get(CLUSTERED_WRITES, "true")).strip().lower()
    if value not in ("true", "false"):
        raise OptionError(f"{CLUSTERED_WRITES} must be true or false, not {value!r}")
    return value == "true"


def cluster_for_write(
    frame: DataFrame,
    tag_columns: Sequence[str],
    time_column: str = "time",
    *,
    keep_order: bool = False,
) -> DataFrame:
    """``frame`` partitioned by its TAG columns (the writer sorts each task's rows);
    unchanged when the conf is off or ``frame`` has none of ``tag_columns``.

    ``keep_order``: rows with the same TAGs and time stay in ``frame``'s order (what
    ``onDuplicate=last`` calls last), by sorting each partition on (TAG, time) and their
    position in ``frame``.
    """
    if not clustered_writes(frame):
        return frame
    by_lower = {c.lower(): c for c in frame.columns}
    tags = [by_lower[t.lower()] for t in tag_columns if t.lower() in by_lower]
    if not tags:
        return frame
    time = by_lower.get(time_column.lower())
    order = [*tags, time] if time is not None else tags
    if not keep_order:
        return frame.repartition(*tags)
    # monotonically_increasing_id follows the frame's order (partition, then row), which is
    # the order collect() returns and onDuplicate=last means.
    position = "__tsfile_position"
    while position in by_lower:
        position += "_"
    numbered = frame.withColumn(position, F.monotonically_increasing_id())
    return numbered.repartition(*tags).sortWithinPartitions(*order, position).drop(position)
