"""Writing rows into a table without Spark: the writer both Spark and ``write_table`` use.

:mod:`~tsfile_catalog.write.plan` checks the incoming columns against the options and the
table, :mod:`~tsfile_catalog.write.staging` stages sorted part files and publishes them,
:mod:`~tsfile_catalog.write.commit` makes the one commit, and
:mod:`~tsfile_catalog.write.api` is the Spark-free entry (``write_table``, ``Table.append``).
The Spark data source (:mod:`~tsfile_catalog.datasource.writer`) calls the same functions
from its tasks and its driver. Nothing here imports pyspark.
"""
