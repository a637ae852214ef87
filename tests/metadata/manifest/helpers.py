"""Parts, schemas and commits the manifest tests build on."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

from tests.factories import part_file, table_schema
from tsfile_catalog.metadata.manifest import (
    Action,
    AddPart,
    Commit,
    Operation,
    SetProperties,
    SetSchema,
    Snapshot,
    StreamTxn,
    apply,
    prepare_commit,
)
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema
from tsfile_catalog.metadata.stats import DeviceStats, FieldStats

SCHEMA = table_schema("weather", fields=[("temp", DataType.DOUBLE), ("day", DataType.DATE)])
WIDER = TableSchema.of("weather", [*SCHEMA.columns, Column("rain", DataType.INT64, Category.FIELD)])


def part(path: str, rows: int = 10, city: str = "paris") -> PartFile:
    return part_file(
        path,
        size_bytes=100 * rows,
        row_count=rows,
        min_time=0,
        max_time=rows - 1,
        devices=[DeviceStats((city,), rows, 0, rows - 1)],
        tag_names=["city"],
        fields={
            "temp": FieldStats(-1.5, 30.25, 0),
            "day": FieldStats(dt.date(2024, 1, 1), dt.date(2024, 3, 1), 2),
        },
    )


def make(base: Snapshot | None, actions: list[Action], operation: str = "WRITE") -> Commit:
    return prepare_commit(actions, base=base, timestamp_ms=1_000, operation=operation)


def created(*parts: PartFile) -> Snapshot:
    actions: list[Action] = [SetSchema(SCHEMA, 0), SetProperties({"owner": "ops"})]
    return apply(None, make(None, [*actions, *(AddPart(p) for p in parts)], "CREATE"))


def landed_after(base: Snapshot, *batches: list[Action]) -> list[Commit]:
    out = []
    for actions in batches:
        commit = make(base, actions)
        base = apply(base, commit)
        out.append(commit)
    return out


def external(url: str) -> PartFile:
    return replace(
        part(url),
        format="parquet",
        external=True,
        read_options={"timeColumn": "ts", "timestampPrecision": "us"},
        partition_values={"city": "paris"},
    )


def declared(base: Snapshot, path: str, complete_until: int | None) -> Commit:
    return prepare_commit(
        [AddPart(part(path))],
        base=base,
        timestamp_ms=1_000,
        operation=Operation.WRITE,
        complete_until=complete_until,
    )


def streamed(base: Snapshot, path: str, query: str, batch: int, max_time: int = 9) -> Commit:
    return prepare_commit(
        [AddPart(part(path))],
        base=base,
        timestamp_ms=1_000,
        operation=Operation.STREAMING_UPDATE,
        txn=StreamTxn(query, batch, max_time),
    )
