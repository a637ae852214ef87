"""Spark's rules without pyspark: its SQL dialect, literals, time range, types, quoting, errors.

Everything here answers "what would Spark do?" as plain Python, so the pure layers (predicates,
DESCRIBE, the SQL catalog's parsing) agree with Spark without starting it. Empty on purpose:
importing one module (``quoting``) must not import the others (``dialect`` needs sqlglot).
"""
