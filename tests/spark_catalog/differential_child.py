"""Spark's own statements, and a session's answers to them: what
tests/spark_catalog/test_differential.py compares between a session with the plugin's
extensions and one with none, which this module's ``main`` runs in a fresh process.

The statements are those of ``differential_statements.sql`` (queries by the categories of
Spark's ``sql-tests``, DDL and DML on Parquet tables and temporary views, DESCRIBE, SHOW, SET,
EXPLAIN, errors, and texts that start like the catalog's own statements; its sections marked
``[long]`` run in the long test only), and every example
of Spark's built-in functions, as the running Spark documents them (``DESCRIBE FUNCTION
EXTENDED``'s ``Examples``, the texts Spark's own ``ExpressionInfoSuite`` runs).

Left out, by rule rather than by hand: the examples of functions whose answer changes from one
run to the next (:data:`NOT_REPEATABLE`), and examples that set the session's configuration
(``SET``), which would leak into the statements after them. A statement whose analysed plan is
not deterministic (``rand()`` inside another function's example) is compared by its columns
only. Answers are normalised as Spark's ``SQLQueryTestSuite`` normalises its golden files: the
run's own directory, expression and plan ids, and the creation time of a table.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

WRITTEN = Path(__file__).with_name("differential_statements.sql")

# Functions whose examples answer differently on each run (time, randomness, identity).
NOT_REPEATABLE = frozenset(
    {
        "curdate",
        "current_date",
        "current_time",
        "current_timestamp",
        "localtimestamp",
        "now",
        "unix_timestamp",  # with no argument: the current time
        "rand",
        "randn",
        "random",
        "randstr",
        "uniform",
        "shuffle",
        "uuid",
        "monotonically_increasing_id",
        "spark_partition_id",
        "input_file_name",
        "input_file_block_start",
        "input_file_block_length",
        "localtime",
        "aes_encrypt",  # a random initialisation vector
        "reflect",  # its example calls java.util.UUID.randomUUID
        "java_method",
        "try_reflect",
    }
)

# An example's text: what follows "> " up to the ";" that ends its line.
_EXAMPLE = re.compile(r">\s*(.+?);\s*$", re.S | re.M)
# What differs between two runs of one statement in Spark's own answers (as SQLQueryTestSuite
# replaces them): expression ids, plan ids, a table's creation time.
_IDS = re.compile(r"#\d+L?|plan_id=\d+|\[id=#?\d+\]")
_TIMES = frozenset({"Created Time", "Last Access"})
_TIME_LINES = re.compile(r"^(Created Time|Last Access): .*$", re.M)
_TIME_FIELDS = re.compile(r'"(created_time|last_access)":"[^"]*"')  # DESCRIBE ... AS JSON


def function_examples(spark: Any) -> list[str]:
    """Every example of Spark's built-in functions, by function name, as Spark documents it,
    but those of :data:`NOT_REPEATABLE` functions and those that set the configuration."""
    registry = spark.sparkContext._jvm.org.apache.spark.sql.catalyst.analysis.FunctionRegistry
    functions = {str(f.funcName()): f for f in _iterate(registry.builtin().listFunction())}
    out: list[str] = []
    for name in sorted(functions.keys() - NOT_REPEATABLE):
        info = registry.builtin().lookupFunction(functions[name])
        if info.isEmpty():
            continue
        for part in re.split(r"\n\s*> ", str(info.get().getExamples()))[1:]:
            match = _EXAMPLE.match("> " + part)
            text = " ".join(match.group(1).split()) if match else ""
            if text and not re.match(r"(?i)SET\b", text):
                out.append(text)
    return list(dict.fromkeys(out))  # one example documents several aliases


def _iterate(scala_seq: Any) -> list[Any]:
    items, it = [], scala_seq.iterator()
    while it.hasNext():
        items.append(it.next())
    return items


def written_statements(*, every: bool) -> list[str]:
    """The statements of ``differential_statements.sql``, comments left out: ``every`` one,
    or those of the sections not marked ``[long]``."""
    lines, long = [], False
    for line in WRITTEN.read_text(encoding="utf-8").splitlines():
        if re.match(r"-- \S", line) and line.rstrip().endswith("."):  # a section's title
            long = line.startswith("-- [long] ")
        if not line.lstrip().startswith("--") and (every or not long):
            lines.append(line)
    return [s.strip() for s in re.split(r";[ \t]*\n", "\n".join(lines) + "\n") if s.strip()]


def run(spark: Any, statements: list[str], directory: str) -> list[dict[str, Any]]:
    """Each statement's columns, types and rows (as text, in order when the statement orders
    them, sorted otherwise), or its error condition; ``{dir}`` in a statement is
    ``directory``, and ``directory`` in an answer is ``{dir}`` again."""
    out: list[dict[str, Any]] = []
    for statement in statements:
        text = statement.replace("{dir}", directory)
        try:
            frame = spark.sql(text)
            schema = frame.schema.simpleString()
            if not frame._jdf.queryExecution().analyzed().deterministic():
                out.append({"schema": schema, "rows": "not deterministic"})
                continue
            rows = [repr(_normalised(r, directory)) for r in frame.collect()]
            if not re.search(r"(?i)\bORDER\s+BY\b", statement):
                rows.sort()
            out.append({"schema": schema, "rows": rows})
        except Exception as e:  # noqa: BLE001 - the error's condition is the answer compared
            condition = getattr(e, "getCondition", lambda: None)()
            out.append({"error": condition or type(e).__name__})
    return out


def _normalised(row: Any, directory: str) -> tuple[Any, ...]:
    """``row`` with what differs between two runs of one statement replaced: the run's
    directory, expression and plan ids, and the creation time in DESCRIBE's and SHOW TABLE
    EXTENDED's rows."""
    values = tuple(_normalised_text(v, directory) if isinstance(v, str) else v for v in row)
    if len(values) >= 2 and str(values[0]).strip() in _TIMES:
        return (values[0], "<time>", *values[2:])
    return values


def _normalised_text(text: str, directory: str) -> str:
    text = _TIME_LINES.sub(r"\1: <time>", text.replace(directory, "{dir}"))
    return _IDS.sub("#x", _TIME_FIELDS.sub(r'"\1":"<time>"', text))


def main() -> None:
    """Run the statements of the JSON file ``argv[1]`` (``statements``, and the ``settings``
    the session starts with) in a session without extensions; print the answers as JSON."""
    from pyspark.sql import SparkSession

    request = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    builder = SparkSession.builder
    for key, value in request["settings"].items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("OFF")
    try:
        with tempfile.TemporaryDirectory() as directory:
            print(json.dumps(run(spark, request["statements"], directory)))
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
    sys.exit(0)
