"""The Arrow read path, without Spark and without the manifest log.

What a scan reads (:mod:`~tsfile_catalog.exec.source`: :class:`ResolvedScan`, carrying its
:class:`~tsfile_catalog.io.FileIO`, time unit and ``timestampAs``), reading planned slices into
Arrow (:mod:`~tsfile_catalog.exec.read`, with the residual filter of
:mod:`~tsfile_catalog.exec.arrow_filter`), the Spark-free ``Table.scan``
(:mod:`~tsfile_catalog.exec.table_scan`), time buckets, partial aggregation and the rows
statistics cannot answer (:mod:`~tsfile_catalog.exec.time_buckets`,
:mod:`~tsfile_catalog.exec.partial_aggregates`, :mod:`~tsfile_catalog.exec.stats_aggregates`).
Nothing here imports :mod:`tsfile_catalog.table`: a table is handed in, never opened.
"""
