"""What the cluster tests share besides fixtures: the cluster's shape, their marks, and
where a test keeps its data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

CLUSTER_MASTER = "local-cluster[2,1,1024]"
EXECUTORS = 2

CLUSTER_TESTS = [pytest.mark.spark, pytest.mark.cluster]
"""The marks of every cluster test module (``pytestmark = CLUSTER_TESTS``)."""


@dataclass(frozen=True)
class ClusterTable:
    """Where a cluster test keeps its data: a root URL, and how to reach it."""

    root: str  # a local directory or s3://bucket/prefix, without a trailing slash
    storage_options: dict[str, Any]  # fsspec's, for the driver-side checks in the test

    @property
    def fs_options(self) -> dict[str, str]:
        """The same settings as the source's ``fs.*`` options: how executors get them."""
        return {f"fs.{k}": str(v) for k, v in self.storage_options.items()}

    def url(self, name: str) -> str:
        return f"{self.root}/{name}"
