"""Benchmark harness: tsfile-catalog vs Parquet on the same Spark session.

Run ``python -m bench.run --help``; results land in ``bench/out/results.json`` and
``docs/benchmarks.md``.
"""
