"""A pipeline of two streaming queries keeps closing windows on time (issue 11): the sink's
completeness declaration (``completeUntilDelay``) becomes the next query's watermark."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tests.datasource.stream_chain import HOUR, run_chain

pytestmark = pytest.mark.spark


def test_a_sinks_completeness_closes_the_next_querys_window(
    spark: SparkSession, tmp_path: Path
) -> None:
    complete_until, emitted, expected = run_chain(spark, tmp_path, str(tmp_path / "t"), {}, {})
    # The sink saw event time 11:00 and declared everything before it committed ...
    assert complete_until == 11 * HOUR
    # ... so the downstream query closed hour 10 in the same run, with hour 10's rows only
    # (markers never counted), equal to Spark's batch evaluation; hour 11 stays open.
    hour_10 = [r for r in expected if r.window.end.hour == 11]
    assert len(hour_10) == 1 and hour_10[0].n == 6
    assert [tuple(r) for r in emitted] == [tuple(hour_10[0])]
