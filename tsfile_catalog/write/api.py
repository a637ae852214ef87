"""Writing without Spark: :func:`write_table`, in the manner of ``deltalake.write_deltalake``.

It finds the table at the URL (:func:`existing_table`, which the Spark writer uses too) and
hands the data to :func:`~tsfile_catalog.write.rows.write_rows`, the path
``Table.append`` / ``Table.overwrite`` take: the writer ``df.write.format("tsfile")`` uses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from tsfile_catalog.discovery import has_manifest, list_tsfiles
from tsfile_catalog.exceptions import OptionError, TableNotFoundError
from tsfile_catalog.io import FileIO
from tsfile_catalog.options import WriteOptions, parse_write_options
from tsfile_catalog.table.handle import Table, open_table
from tsfile_catalog.write.rows import WriteData, write_options, write_rows

__all__ = ["write_table", "existing_table"]


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
    parsed = parse_write_options(write_options(url, options, table=table, tag_columns=tag_columns))
    if storage_options:
        parsed = replace(parsed, storage_options={**parsed.storage_options, **storage_options})
    write_rows(parsed, data, table=existing_table(parsed), overwrite=mode == "overwrite")


def existing_table(options: WriteOptions) -> Table | None:
    """The table at ``options.path``, or None when the write creates one.

    Raises:
        TableNotFoundError: the folder holds TsFiles but no manifest (adopt it first).
    """
    io = FileIO(options.path, options.storage_options)
    if not has_manifest(io, options.path):
        if io.exists(options.path) and io.isdir(options.path):
            _, files = list_tsfiles(io, options.path)
            if files:
                raise TableNotFoundError(
                    f"{options.path} holds TsFiles but no table manifest; adopt it first with "
                    "tsfile_catalog.adopt_table(path) so its existing files stay visible"
                )
        return None
    try:
        return open_table(options.path, storage_options=options.storage_options)
    except TableNotFoundError:
        # A manifest folder without a commit: the table's first commit was killed. This
        # write creates the table; files the killed one left behind are vacuum's orphans.
        return None
