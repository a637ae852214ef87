"""Builders for the metadata records tests make by hand: parts and table schemas.

Every test that needs a :class:`PartFile` or a :class:`TableSchema` it does not read from a
real file builds it here, by keyword, so a new field changes one place and a test names only
the values it cares about.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from tsfile_catalog.metadata.manifest import (
    AddPart,
    Commit,
    CommitInfo,
    RemovePart,
    Snapshot,
    StreamTxn,
)
from tsfile_catalog.metadata.parts import (
    DeviceStats,
    FieldStats,
    PartFile,
    SeriesStats,
    TagStats,
    tag_stats_from_devices,
)
from tsfile_catalog.metadata.schema import Category, Column, DataType, TableSchema


def part_file(
    path: str = "p.tsfile",
    *,
    format: str = "tsfile",
    size_bytes: int = 1,
    row_count: int = 1,
    min_time: int | None = 0,
    max_time: int | None = 0,
    devices: Iterable[DeviceStats] | None = None,
    tag_names: Sequence[str] | None = None,
    fields: Mapping[str, FieldStats] | None = None,
) -> PartFile:
    """A part with the given stats (by default one row at time 0, no device stats).

    With ``tag_names``, the per-tag stats are derived from ``devices`` the way a writer records
    them; without, the part has no tag stats.
    """
    device_stats = None if devices is None else tuple(devices)
    tags = (
        {}
        if tag_names is None
        else tag_stats_from_devices(tag_names, [d.tags for d in device_stats or ()])
    )
    return PartFile(
        path=path,
        format=format,
        size_bytes=size_bytes,
        row_count=row_count,
        min_time=min_time,
        max_time=max_time,
        devices=device_stats,
        tags=tags,
        fields=dict(fields or {}),
    )


def part_of_devices(path: str, *devices: DeviceStats) -> PartFile:
    """A part holding ``devices`` (TAGs ``city``, ``device``), its row count and time range
    theirs."""
    return part_file(
        path,
        row_count=sum(d.row_count for d in devices),
        min_time=min(d.min_time for d in devices),
        max_time=max(d.max_time for d in devices),
        devices=devices,
        tag_names=["city", "device"],
    )


def sql_values(rows: Sequence[tuple[Any, ...]]) -> str:
    """``rows`` as the rows of a SQL ``VALUES`` list (strings quoted, None as NULL)."""

    def literal(v: Any) -> str:
        if v is None:
            return "NULL"
        return f"'{v}'" if isinstance(v, str) else repr(v)

    return ", ".join("(" + ", ".join(literal(v) for v in row) + ")" for row in rows)


def part_of_ranges(path: str, *devices: tuple[str, str, int, int], rows: int = 5) -> PartFile:
    """A part holding each (city, device, first time, last time) with ``rows`` rows each."""
    return part_of_devices(path, *(DeviceStats((c, d), rows, lo, hi) for c, d, lo, hi in devices))


def table_schema(
    name: str,
    *,
    tags: Sequence[str] = ("city",),
    fields: Iterable[tuple[str, DataType]] = (),
) -> TableSchema:
    """A schema of STRING tag columns ``tags`` followed by the FIELD columns ``fields``."""
    return TableSchema.of(
        name,
        [
            *(Column(tag, DataType.STRING, Category.TAG) for tag in tags),
            *(Column(field, type_, Category.FIELD) for field, type_ in fields),
        ],
    )


def weather_schema(*fields: tuple[str, DataType], table: str = "weather") -> TableSchema:
    """The TsFile tests' table: tags ``city`` and ``device``, then ``fields``."""
    return table_schema(table, tags=("city", "device"), fields=fields)


# -- hypothesis strategies over the manifest model ----------------------------------------------
# Every field of PartFile, Snapshot and their stats is drawn here; tests that round-trip them
# (JSON and Parquet checkpoints) first check these sets still name every dataclass field, so a
# field another change adds fails loudly until it is drawn too.

STRATEGY_FIELDS = {
    "PartFile": frozenset(
        {
            "path",
            "format",
            "size_bytes",
            "row_count",
            "min_time",
            "max_time",
            "devices",
            "tags",
            "fields",
            "external",
            "schema_id",
            "added_version",
            "read_options",
            "partition_values",
            "source_stamp",
            "sequence",
        }
    ),
    "DeviceStats": frozenset({"tags", "row_count", "min_time", "max_time", "fields"}),
    "TagStats": frozenset({"values", "min", "max", "has_null"}),
    "FieldStats": frozenset({"min", "max", "null_count"}),
    "Snapshot": frozenset(
        {
            "version",
            "timestamp_ms",
            "schema",
            "schema_id",
            "parts",
            "properties",
            "table_uuid",
            "transactions",
            "complete_until",
        }
    ),
}

# Committed schemas have column ids (1..n, physical name = name, as read from JSON).
STRATEGY_SCHEMA = TableSchema.of(
    "weather",
    [
        Column("city", DataType.STRING, Category.TAG),
        Column("device", DataType.STRING, Category.TAG),
        Column("f_long", DataType.INT64, Category.FIELD),
        Column("f_double", DataType.DOUBLE, Category.FIELD),
        Column("f_date", DataType.DATE, Category.FIELD),
        Column("f_str", DataType.STRING, Category.FIELD),
        Column("f_bool", DataType.BOOLEAN, Category.FIELD),
    ],
).with_ids()

_int64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
_count = st.integers(min_value=0, max_value=2**40)
_name = st.text(max_size=6)
_tag_value = st.one_of(st.none(), st.text(max_size=4))
_stat_values: dict[str, st.SearchStrategy[Any]] = {
    "f_long": _int64,
    "f_double": st.floats(allow_nan=False, allow_infinity=False),
    "f_date": st.dates(),
    "f_str": st.text(max_size=5),
    "f_bool": st.booleans(),
}


@st.composite
def field_stats(draw: st.DrawFn, column: str) -> FieldStats:
    values = st.one_of(st.none(), _stat_values[column])
    return FieldStats(draw(values), draw(values), draw(st.one_of(st.none(), _count)))


@st.composite
def series_stats(draw: st.DrawFn, column: str) -> SeriesStats:
    values = st.one_of(st.none(), _stat_values[column])
    times = st.one_of(st.none(), _int64)
    return SeriesStats(
        count=draw(_count),
        sum=draw(st.one_of(st.none(), _int64)) if column == "f_long" else None,
        min=draw(values),
        max=draw(values),
        first=draw(values),
        first_time=draw(times),
        last=draw(values),
        last_time=draw(times),
        sum_double=(
            draw(st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False)))
            if column == "f_double"
            else None
        ),
    )


@st.composite
def device_stats(draw: st.DrawFn) -> DeviceStats:
    columns = draw(
        st.one_of(
            st.none(), st.lists(st.sampled_from(sorted(_stat_values)), unique=True, max_size=3)
        )
    )
    return DeviceStats(
        tuple(draw(st.lists(_tag_value, max_size=2))),
        draw(_count),
        draw(_int64),
        draw(_int64),
        None if columns is None else {c: draw(series_stats(c)) for c in columns},
    )


@st.composite
def tag_stats(draw: st.DrawFn) -> TagStats:
    values = draw(st.one_of(st.none(), st.frozensets(st.text(max_size=4), max_size=4)))
    return TagStats(
        values,
        draw(st.one_of(st.none(), _name)),
        draw(st.one_of(st.none(), _name)),
        draw(st.booleans()),
    )


@st.composite
def part_files(draw: st.DrawFn, index: int = 0) -> PartFile:
    """Any part the manifest can record (internal or external), with a path unique by
    ``index``; FIELD stats typed by :data:`STRATEGY_SCHEMA`."""
    external = draw(st.booleans())
    name = draw(st.text(alphabet="abc-_09", min_size=1, max_size=6))
    path = f"s3://lake/{name}/{index}.parquet" if external else f"{name}/{index}.tsfile"
    devices = draw(st.one_of(st.none(), st.lists(device_stats(), max_size=4).map(tuple)))
    columns = draw(st.lists(st.sampled_from(sorted(_stat_values)), unique=True, max_size=5))
    strings = st.dictionaries(_name, st.text(max_size=5), max_size=2)
    return PartFile(
        path=path,
        format=draw(st.sampled_from(["parquet", "orc", "csv"])) if external else "tsfile",
        size_bytes=draw(_count),
        row_count=draw(_count),
        min_time=draw(st.one_of(st.none(), _int64)),
        max_time=draw(st.one_of(st.none(), _int64)),
        devices=devices,
        tags=draw(st.dictionaries(st.sampled_from(["city", "device"]), tag_stats())),
        fields={c: draw(field_stats(c)) for c in columns},
        external=external,
        schema_id=draw(st.integers(min_value=0, max_value=9)),
        added_version=draw(st.integers(min_value=-1, max_value=2**40)),
        read_options=draw(strings) if external else {},
        partition_values=draw(strings) if external else {},
        source_stamp=draw(st.one_of(st.none(), st.text(max_size=12))) if external else None,
        sequence=draw(st.one_of(st.none(), st.integers(min_value=0, max_value=2**40))),
    )


@st.composite
def snapshots(draw: st.DrawFn, max_parts: int = 6) -> Snapshot:
    count = draw(st.integers(min_value=0, max_value=max_parts))
    return Snapshot(
        version=draw(st.integers(min_value=0, max_value=2**40)),
        timestamp_ms=draw(st.integers(min_value=0, max_value=2**50)),
        schema=STRATEGY_SCHEMA,
        schema_id=draw(st.integers(min_value=0, max_value=9)),
        parts=tuple(draw(part_files(i)) for i in range(count)),
        properties=draw(st.dictionaries(_name, st.text(max_size=5), max_size=3)),
        table_uuid=str(draw(st.uuids())),
        transactions={
            app: StreamTxn(app, draw(_count), draw(st.one_of(st.none(), _int64)))
            for app in draw(st.sets(st.text(min_size=1, max_size=6), max_size=2))
        },
        complete_until=draw(st.one_of(st.none(), _int64)),
    )


STRATEGY_UUID = "5f0c9a3e-8d1b-4c2e-9a57-2b6f1e0d4c3a"


def commit_of(
    version: int, actions: Sequence[AddPart | RemovePart], table_uuid: str = STRATEGY_UUID
) -> Commit:
    """A WRITE commit of ``actions`` at ``version``."""
    return Commit(CommitInfo(version, version + 1, "WRITE"), tuple(actions), table_uuid)


@st.composite
def commit_histories(
    draw: st.DrawFn, first_version: int = 1, table_uuid: str = STRATEGY_UUID
) -> tuple[list[PartFile], list[Commit]]:
    """Parts of a snapshot and valid commits after it (from ``first_version``): adds of new
    parts, removes of parts present (from the snapshot or added since), re-adds of removed
    ones."""
    base = [draw(part_files(i)) for i in range(draw(st.integers(0, 8)))]
    known = {p.path: p for p in base}
    present = [p.path for p in base]
    gone: list[PartFile] = []
    commits = []
    fresh = 100
    for step in range(draw(st.integers(1, 5))):
        actions: list[AddPart | RemovePart] = []
        for _ in range(draw(st.integers(0, 4))):
            kind = draw(st.sampled_from(["add", "remove", "readd"]))
            if kind == "remove" and present:
                path = present.pop(draw(st.integers(0, len(present) - 1)))
                actions.append(RemovePart(path))
                gone.append(known[path])
            elif kind == "readd" and gone:
                again = gone.pop()
                present.append(again.path)
                actions.append(AddPart(again))
            else:
                added = draw(part_files(fresh))
                fresh += 1
                known[added.path] = added
                present.append(added.path)
                actions.append(AddPart(added))
        commits.append(commit_of(first_version + step, actions, table_uuid))
    return base, commits


# -- rows for the time-ordered LIMIT tests (tests/*/test_time_top*.py) -------------------------

HOURLY_DEVICES = (("bj", "d1"), ("bj", "d2"), ("sh", "d3"), ("sh", "d4"))
# The plugin tests' weather table (tests/spark_catalog/conftest.py), in Spark DDL.
WEATHER_COLUMNS = "time TIMESTAMP, city STRING, device STRING, temp DOUBLE, rain INT"


def hourly_weather(day: int, devices: int = 4) -> list[tuple[object, ...]]:
    """Rows of :data:`WEATHER_COLUMNS`: every hour of day ``day`` (from 2024-01-01 UTC) for the
    first ``devices`` of :data:`HOURLY_DEVICES`, with NULLs among the temperatures."""
    base = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    rows: list[tuple[object, ...]] = []
    for hour in range(24):
        for k, (city, device) in enumerate(HOURLY_DEVICES[:devices]):
            i = day * 100 + hour * 4 + k
            temp = None if i % 7 == 3 else round(10 + (i % 13) * 1.5, 1)
            rows.append((base + dt.timedelta(days=day, hours=hour), city, device, temp, i % 3))
    return rows
