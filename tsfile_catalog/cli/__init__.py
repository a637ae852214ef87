"""The ``tsfile-catalog`` command line: thin commands over :mod:`tsfile_catalog.table` and
:mod:`tsfile_catalog.inspect` (no Spark, no JVM). See ``docs/cli.md``."""
