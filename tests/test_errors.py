"""tsfile_catalog.errors.unwrap: our exception back from Spark's wrapping, and how short
Spark's wrapped error is in a local_session()."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

import tsfile_catalog
from tsfile_catalog.exceptions import OptionError, PredicateError, VersionNotFoundError

TRACEBACK = """[PYTHON_DATA_SOURCE_ERROR] Failed to create Python data source instance: Traceback \
(most recent call last):
  File "/site-packages/tsfile_catalog/table/handle.py", line 499, in open_table
    raise StorageError("storage read of /t/x failed")
tsfile_catalog.exceptions.StorageError: storage read of /t/x failed

The above exception was the direct cause of the following exception:

  File "/site-packages/tsfile_catalog/datasource/source.py", line 102, in _scan
    raise VersionNotFoundError(_missing_version(location, listing, version))
tsfile_catalog.exceptions.VersionNotFoundError: table /t has no version 9 (versions 0..0)
 SQLSTATE: 38000"""


class SparkLike(Exception):
    """Stands in for PySpark's exceptions, whose text comes from getMessage()."""

    def getMessage(self) -> str:  # noqa: N802 (PySpark's name)
        return str(self.args[0])


def test_unwrap_rebuilds_the_raised_exception_from_a_traceback() -> None:
    wrapped = SparkLike(TRACEBACK)
    error = tsfile_catalog.errors.unwrap(wrapped)
    assert type(error) is VersionNotFoundError
    assert str(error) == "table /t has no version 9 (versions 0..0)"
    assert error.__cause__ is wrapped


def test_unwrap_reads_spark_hidden_traceback_text() -> None:
    text = (
        "[PYTHON_DATA_SOURCE_ERROR] Failed to create Python data source instance: "
        "tsfile_catalog.exceptions.PredicateError: unknown column 'nope' in predicate\n"
        " SQLSTATE: 38000"
    )
    error = tsfile_catalog.errors.unwrap(RuntimeError(text))
    assert type(error) is PredicateError and str(error) == "unknown column 'nope' in predicate"


class JvmLike(Exception):
    """Stands in for PySpark's wrapping of a JVM exception that is not Spark's own (the
    plugin's IllegalArgumentException): getMessage() is empty, str() holds the text."""

    def getMessage(self) -> str:  # noqa: N802 (PySpark's name)
        return ""


def test_unwrap_reads_str_when_get_message_is_empty() -> None:
    wrapped = JvmLike("tsfile_catalog.exceptions.VersionNotFoundError: table /t has no version 9")
    error = tsfile_catalog.errors.unwrap(wrapped)
    assert type(error) is VersionNotFoundError and str(error) == "table /t has no version 9"


def test_unwrap_returns_ours_and_leaves_others_alone() -> None:
    ours = OptionError("bad")
    assert tsfile_catalog.errors.unwrap(ours) is ours
    try:
        try:
            raise ours
        except OptionError as e:
            raise RuntimeError("wrapped") from e
    except RuntimeError as outer:
        assert tsfile_catalog.errors.unwrap(outer) is ours
    other = ValueError("tsfile_catalog.exceptions.NoSuchError: x")
    assert tsfile_catalog.errors.unwrap(other) is other
    plain = KeyError("k")
    assert tsfile_catalog.errors.unwrap(plain) is plain


@pytest.mark.spark
def test_a_data_source_error_is_short_and_unwraps(spark: SparkSession, tmp_path: Path) -> None:
    """In a local_session() Spark reports the source's error as its class and message (it was
    12 to 30 lines of worker traceback), and unwrap gives the exception back."""
    with pytest.raises(Exception) as raised:
        spark.read.format("tsfile").option("colour", "red").load(str(tmp_path)).collect()
    text = raised.value.getMessage() if hasattr(raised.value, "getMessage") else str(raised.value)
    assert "Traceback" not in text and len(text.strip().splitlines()) <= 2, text
    error = tsfile_catalog.errors.unwrap(raised.value)
    assert type(error) is OptionError
    assert str(error).startswith("unknown read option 'colour'; valid options are: path,")
