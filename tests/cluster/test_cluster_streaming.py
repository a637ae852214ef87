"""Streaming across executors: the chained sink and source of
tests/datasource/stream_chain.py on local-cluster, on local disk and on S3."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from tests.cluster.helpers import CLUSTER_TESTS, ClusterTable
from tests.datasource.stream_chain import HOUR, run_chain

pytestmark = CLUSTER_TESTS


def test_sink_and_source_chained_on_executors(
    cluster_spark: SparkSession, cluster_table: ClusterTable, tmp_path: Path
) -> None:
    complete_until, emitted, expected = run_chain(
        cluster_spark,
        tmp_path,
        cluster_table.url("chained"),
        cluster_table.fs_options,
        cluster_table.storage_options,
    )
    assert complete_until == 11 * HOUR
    hour_10 = [tuple(r) for r in expected if r.window.end.hour == 11]
    assert [tuple(r) for r in emitted] == hour_10
