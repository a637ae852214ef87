"""Writing pyarrow or pandas data into a table: what ``write_table`` and ``Table.append`` /
``Table.overwrite`` run.

The data goes through the very writer a ``df.write.format("tsfile")`` uses, with the same
options by the same names (:func:`~tsfile_catalog.options.parse_write_options`),
the same checks (:mod:`~tsfile_catalog.write.plan`), the same sorting and part files
(:mod:`~tsfile_catalog.write.staging`) and the same one commit
(:mod:`~tsfile_catalog.write.commit`). The rows are staged as one task would stage them, a
part whenever ``maxRowsPerFile`` rows are pending, so a ``RecordBatchReader`` streams through
in bounded memory. The table itself comes from the caller (``Table`` or
:func:`~tsfile_catalog.write.api.write_table`), so this module never opens one.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import pyarrow as pa

from tsfile_catalog.exceptions import DataError, OptionError
from tsfile_catalog.metadata.ownership import new_job_id
from tsfile_catalog.options import WriteOptions
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

    from tsfile_catalog.table.handle import Table
    from tsfile_catalog.table.rewrite_tasks import TaskRunner

__all__ = ["WriteData", "write_options", "write_rows"]

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


def write_rows(
    options: WriteOptions,
    data: WriteData,
    *,
    table: Table | None,
    overwrite: bool,
    runner: TaskRunner | None = None,
) -> None:
    """Plan, stage and commit ``data`` with the parsed DataFrame writer ``options`` into
    ``table``, the latest version of the table at ``options.path`` (None: create one);
    ``runner`` rewrites a ``replaceWhere``'s straddling parts (None: here).

    Raises:
        as :func:`~tsfile_catalog.write.api.write_table`.
    """
    check_write_mode(options, overwrite)
    schema, batches = _batches(data)
    plan = plan_write(arrow_columns(schema), options, table)
    time_zone = options.time_zone
    replace_where = (
        None
        if options.replace_where is None
        else replace_predicate(plan, options, time_zone, exact=True)
    )
    job = new_job_id()
    parts, _ = stage_task(
        batches,
        schema=plan.schema,
        time_source=plan.time_source,
        sources=plan.sources,
        unit=plan.unit,
        options=options,
        job=job,
        partition=0,
        attempt=0,
        check=None
        if replace_where is None
        else lambda raw: check_replaced(raw, replace_where, options),
    )
    commit_write(
        plan,
        options,
        # The table as the commit starts: a replaceWhere removes the rows it holds then.
        current=lambda: None if table is None else table.latest(),
        job=job,
        staged=list(parts),
        overwrite=overwrite,
        time_zone=time_zone,
        runner=runner,
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
