"""The Spark catalog plugin: TsFile tables in ``spark.sql``, ``spark.table`` and ``writeTo``.

A thin Java adapter (``jvm/src``, built by :mod:`.build`) implements Spark's ``TableCatalog``
and calls back into this driver's Python (:mod:`.delegate`) for every answer; :mod:`.session`
wires both into a session. See docs/spark-catalog.md.
"""
