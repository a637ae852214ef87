"""Spark's automatic discovery hook (SPARK-45917).

Spark imports every installed top-level module named ``pyspark_*`` that exposes a
``DefaultSource`` DataSource subclass and registers it under its ``name()``, so
``format("tsfile")`` and ``USING tsfile`` work in any session with no registration call.
"""

from tsfile_catalog.datasource.source import TsFileDataSource as DefaultSource

__all__ = ["DefaultSource"]
