"""What the table-layer tests share: the schemas, a part builder, and the log's file names."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from tests.factories import part_file, table_schema
from tsfile_catalog.formats.tsfile import WriteSettings
from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.parts import DeviceStats, FieldStats, PartFile
from tsfile_catalog.metadata.schema import DataType, TableSchema
from tsfile_catalog.table import MANIFEST_DIR, STAGING_DIR, append_parts
from tsfile_catalog.table.rewrite import stage_part

# The writer child processes import tests.factories: they need the repository on their path.
REPO = Path(__file__).resolve().parents[2]
CHILD_ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
}

SCHEMA = table_schema("weather", fields=[("temp", DataType.FLOAT)])
WIDER = table_schema("weather", fields=[("temp", DataType.DOUBLE), ("rain", DataType.INT64)])


def part(path: str, *, city: str = "paris", start: int = 0, rows: int = 10) -> PartFile:
    return part_file(
        path,
        size_bytes=rows * 8,
        row_count=rows,
        min_time=start,
        max_time=start + rows - 1,
        devices=[DeviceStats((city,), rows, start, start + rows - 1)],
        tag_names=["city"],
        fields={"temp": FieldStats(1.0, 2.0, 0)},
    )


def write(root: Path, *names: str) -> None:
    for name in names:
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"tsfile")


def log_file(root: Path, version: int, suffix: str = ".json") -> Path:
    return root / MANIFEST_DIR / f"{version:020d}{suffix}"


def append_n(url: str, n: int, prefix: str = "p") -> None:
    for i in range(n):
        append_parts(url, [part(f"{prefix}{i}.tsfile", start=i * 10)], SCHEMA)


def paths(table: Any) -> list[str]:
    return sorted(p.path for p in table.parts())


def append_rows(
    root: str,
    rows: pa.Table,
    schema: TableSchema,
    *,
    overwrite: bool = False,
    storage_options: dict[str, Any] | None = None,
    properties: Mapping[str, str] | None = None,
) -> int:
    """One append (or overwrite) of real TsFile rows, staged, moved and committed as the
    batch writer does (a writer-named part, so OPTIMIZE may compact it); the committed
    version. ``properties`` are those of a table the append creates."""
    io = FileIO(root, storage_options)
    staging = join_url(root, STAGING_DIR, "0123456789ab", "00000-0")
    with tempfile.TemporaryDirectory() as local:
        staged = stage_part(io, rows, schema, WriteSettings(), staging=staging, local_dir=local)
    io.move(staged.staged_url, join_url(root, staged.part.path))
    io.remove_empty_dir(staging)
    io.remove_empty_dir(join_url(root, STAGING_DIR, "0123456789ab"))
    io.remove_empty_dir(join_url(root, STAGING_DIR))
    return append_parts(
        root,
        [staged.part],
        schema,
        overwrite=overwrite,
        storage_options=storage_options,
        properties=properties,
    )


def key_view(url: str, **kwargs: Any) -> list[tuple[Any, ...]]:
    """The rows of the table at ``url`` as the key rule defines them, read part by part with
    no read path's merging: in a ``key.duplicates = last`` table, of the rows sharing (TAG
    values, time) the one of the part with the largest key sequence; in a ``keep`` table,
    every row. Sorted; each row in table column order."""
    # Imported here: the table-layer tests that never read rows do not load pyarrow's reader.
    from tsfile_catalog.metadata.key import key_mode
    from tsfile_catalog.table import open_table
    from tsfile_catalog.table.rewrite import read_part_rows

    table = open_table(url, **kwargs)
    key = [*table.schema.tag_names, table.schema.names[0]]
    rows: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
    for p in sorted(table.parts(), key=lambda p: p.key_sequence):
        for row in read_part_rows(table, p).to_pylist():
            values = tuple(row[c] for c in table.schema.names)
            rows.setdefault(tuple(row[c] for c in key), []).append(values)
    last = key_mode(table.properties) == "last"
    out = [v[-1:] if last else v for v in rows.values()]
    return sorted((r for group in out for r in group), key=repr)


def fill_small_parts(url: str, storage_options: dict[str, Any] | None = None) -> None:
    """Twelve appends to the (empty) table at ``url`` of three cities × 20 times each, in
    disjoint time ranges, then two replays of the 1st and 6th append's keys with new values;
    ``targetFileSize`` set to about four parts: an OPTIMIZE of it makes several groups, in a
    ``last`` table two of them closed over the replays' key overlap."""
    # Imported here: only the rewrite tests that build this table load the table handle.
    from tsfile_catalog.table import open_table

    schema = open_table(url, storage_options=storage_options).schema
    temp = schema.columns[-1].name

    def rows(batch: int, shift: float) -> pa.Table:
        times = [batch * 100 + t for t in range(20) for _ in range(3)]
        cities = [f"c{c}" for _ in range(20) for c in range(3)]
        temps = pa.array([t + shift for t in times], pa.float32())
        return pa.table({schema.names[0]: times, "city": cities, temp: temps})

    for batch in range(12):
        append_rows(url, rows(batch, 0.0), schema, storage_options=storage_options)
    for batch in (0, 5):
        append_rows(url, rows(batch, 0.5), schema, storage_options=storage_options)
    table = open_table(url, storage_options=storage_options)
    size = max(p.size_bytes for p in table.parts())
    table.alter.set_properties({"targetFileSize": str(4 * size)})


def key_change_layout(layout: list[tuple[Any, ...]]) -> tuple[list[tuple[Any, ...]], int]:
    """A key change's result in ``layout`` ((rows, min time, max time, key sequence) per
    part): the parts it rewrote or left (their key sequences kept, so below the newest), and
    how many rows its new parts hold (as many parts as Spark tasks staged them, where the
    driver writes one)."""
    newest = max(entry[3] for entry in layout)
    return (
        [entry for entry in layout if entry[3] < newest],
        sum(entry[0] for entry in layout if entry[3] == newest),
    )


def wait_until_older_than_now(url: str) -> None:
    """Sleep until every version of the table at ``url`` is older than the clock: commits in
    one millisecond get increasing timestamps, which may run ahead of it, and an expiry with
    ``retention_ms=0`` would then keep them (its cutoff is "now")."""
    import time

    from tsfile_catalog.table import clear_cache, open_table

    clear_cache()
    newest = open_table(url).snapshot.timestamp_ms
    while time.time() * 1000 <= newest + 1:
        time.sleep(0.005)
