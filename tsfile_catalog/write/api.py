"""Writing without Spark: :func:`write_table`, and what ``Table.append``/``overwrite`` run.

In the manner of ``deltalake.write_deltalake`` and pyiceberg's ``append``: pyarrow or pandas
data goes through the very writer a ``df.write.format("tsfile")`` uses, with the same
options by the same names (:func:`~tsfile_catalog.datasource.options.parse_write_options`),
the same checks (:mod:`~tsfile_catalog.write.plan`), the same sorting and part files
(:mod:`~tsfile_catalog.write.staging`) and the same one commit
(:mod:`~tsfile_catalog.write.commit`). The rows are staged as one task would stage them, a
part whenever ``maxRowsPerFile`` rows are pending, so a ``RecordBatchReader`` streams through
in bounded memory.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import pyarrow as pa

from tsfile_catalog.datasource.options import parse_write_options
from tsfile_catalog.exceptions import DataError, OptionError, TableNotFoundError
from tsfile_catalog.metadata.ownership import new_job_id
from tsfile_catalog.write.arrow import arrow_columns
from tsfile_catalog.write.commit import commit_write
from tsfile_catalog.write.plan import (
    check_replaced,
    check_write_mode,
    plan_write,
    replace_predicate,
)
from tsfile_catalog.write.staging import stage_task

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["WriteData", "write_table", "write_options"]

WriteData: TypeAlias = "pa.Table | pa.RecordBatchReader | pa.RecordBatch | pd.DataFrame"

# Rows converted at a time: a batch larger than this (a huge pandas frame, a reader's big
# batch) is sliced, so conversion never holds more than one part's rows plus one chunk.
_CHUNK_ROWS = 65_536


def write_options(
    url: str,
    options: Mapping[str, Any] | None,
    *,
    table: str | None = None,
    tag_columns: Sequence[str] | None = None,
    replace_where: str | None = None,
) -> dict[str, str]:
    """The DataFrame writer's options for a write to ``url``: ``options`` (the writer's
    names; values as Spark would turn them into strings) with the keyword arguments that
    stand for some of them.

    Raises:
        OptionError: ``path`` among the options, or an option given both ways, differently.
    """
    given = {str(k): _option_text(v) for k, v in (options or {}).items()}
    lowered = {k.lower(): k for k in given}
    if "path" in lowered:
        raise OptionError(
            f"option '{lowered['path']}' is not taken here: the table's location is the url"
        )
    named = {
        "table": table,
        "tagColumns": None if tag_columns is None else ",".join(tag_columns),
        "replaceWhere": replace_where,
    }
    for option, value in named.items():
        if value is None:
            continue
        key = lowered.get(option.lower())
        if key is not None and given[key].strip() != value.strip():
            raise OptionError(
                f"option '{key}' = {given[key]!r} contradicts the argument giving {value!r}; "
                "give it once"
            )
        if key is not None:
            del given[key]
        given[option] = value
    return {**given, "path": url}


def _option_text(value: Any) -> str:
    # What Spark's DataFrameWriter.option() makes of a Python value.
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def write_table(
    url: str,
    data: WriteData,
    *,
    mode: Literal["append", "overwrite"] = "append",
    table: str | None = None,
    tag_columns: Sequence[str] | None = None,
    options: Mapping[str, Any] | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> None:
    """Write ``data`` into the table at ``url`` without Spark, in one commit.

    The same as ``df.write.format("tsfile").mode(mode).options(**options).save(url)`` with
    the same rows: the same checks, sorting, duplicate rules, part files and commit.

    Args:
        url: the table root (a local path or an fsspec URL); a missing or empty folder
            makes a new table.
        data: a pyarrow ``Table``, ``RecordBatch`` or ``RecordBatchReader`` (streamed, in
            bounded memory), or a pandas ``DataFrame`` (its index is not written).
        mode: ``"append"`` adds the rows; ``"overwrite"`` replaces the table's rows (only
            those matching the ``replaceWhere`` option, when given).
        table: the TsFile table name; needed only to create the table.
        tag_columns: the TAG columns, in order; needed only to create the table.
        options: the DataFrame writer's options by the same names (``timeColumn``,
            ``onDuplicate``, ``maxRowsPerFile``, ``replaceWhere``, ``timeZone``, ...; see
            docs/options.md). An unknown option is refused, naming it.
        storage_options: passed to fsspec (credentials, ``endpoint_url``, ...).

    Raises:
        OptionError: an unknown or bad option, or a bad ``mode``.
        SchemaError, UnsupportedTypeError: the data does not fit the table (naming the column).
        DataError: a null or NUL TAG value, a null time, duplicate rows (``onDuplicate``
            error), or a row outside ``replaceWhere``; nothing was committed.
        CommitConflictError: a concurrent commit conflicts; nothing was committed.
    """
    if mode not in ("append", "overwrite"):
        raise OptionError(f"mode = {mode!r} is not valid; use 'append' or 'overwrite'")
    given = write_options(url, options, table=table, tag_columns=tag_columns)
    write_rows(given, data, overwrite=mode == "overwrite", storage_options=storage_options)


def write_rows(
    options: Mapping[str, str],
    data: WriteData,
    *,
    overwrite: bool,
    storage_options: Mapping[str, Any] | None = None,
    table_uuid: str | None = None,
) -> None:
    """Plan, stage and commit ``data`` with the DataFrame writer's ``options`` (``path``
    among them); ``table_uuid``, when given, is the table the write must land in.

    Raises:
        TableNotFoundError: the location holds no table ``table_uuid`` (anymore).
        (and as :func:`write_table`)
    """
    parsed = parse_write_options(options)
    if storage_options:
        parsed = replace(parsed, storage_options={**parsed.storage_options, **storage_options})
    check_write_mode(parsed, overwrite)
    schema, batches = _batches(data)
    plan = plan_write(arrow_columns(schema), parsed)
    if table_uuid is not None and plan.table_uuid != table_uuid:
        raise TableNotFoundError(
            f"table {table_uuid} is no longer at {parsed.path}: it holds "
            f"{plan.table_uuid or 'no table'} now (the table was dropped and recreated)"
        )
    time_zone = parsed.time_zone
    replace_where = (
        None
        if parsed.replace_where is None
        else replace_predicate(plan, parsed, time_zone, exact=True)
    )
    job = new_job_id()
    parts, _ = stage_task(
        batches,
        schema=plan.schema,
        time_source=plan.time_source,
        sources=plan.sources,
        options=parsed,
        job=job,
        partition=0,
        attempt=0,
        check=None
        if replace_where is None
        else lambda raw: check_replaced(raw, replace_where, parsed),
    )
    commit_write(
        plan, parsed, job=job, staged=list(parts), overwrite=overwrite, time_zone=time_zone
    )


def _batches(data: WriteData) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    """The schema of ``data`` and its rows as batches of at most ``_CHUNK_ROWS``; a reader
    is consumed lazily, as the staging asks for rows."""
    if isinstance(data, pa.RecordBatchReader):
        return data.schema, _chunks(data)
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    elif _is_pandas(data):
        data = pa.Table.from_pandas(data, preserve_index=False)
    if isinstance(data, pa.Table):
        return data.schema, _chunks(data.to_batches(max_chunksize=_CHUNK_ROWS))
    raise DataError(
        f"cannot write a {type(data).__module__}.{type(data).__qualname__}: give a pyarrow "
        "Table, RecordBatch or RecordBatchReader, or a pandas DataFrame"
    )


def _chunks(
    batches: Iterator[pa.RecordBatch] | Sequence[pa.RecordBatch],
) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        for start in range(0, batch.num_rows, _CHUNK_ROWS):
            yield batch.slice(start, _CHUNK_ROWS)


def _is_pandas(data: object) -> bool:
    # Only a caller that has pandas can hand us a DataFrame: never import it for the check.
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(data, pandas.DataFrame)
