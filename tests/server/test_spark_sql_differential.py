"""``spark-sql -f`` (PySpark's ``bin/spark-sql``) answers the first statements of
tests/spark_catalog/differential_statements.sql alike with the catalog's settings
(``catalog_config``: the plugin's jar, its session extensions, a tsfile catalog as the CLI's
``ts``) and with none: the same printed rows, and the same errors, statement by statement."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.server.conftest import LOCAL_SPARK_SQL, child_env, pyspark_home
from tests.spark_catalog.differential_child import written_statements

pytestmark = [pytest.mark.server, pytest.mark.spark]

# The setup, the statistics rules' aggregates on Parquet tables and views, joins, subqueries,
# set operations and grouping, of the statements the PySpark test runs.
_COUNT = 120
_SETTINGS = (
    *LOCAL_SPARK_SQL,
    "--conf",
    "spark.sql.shuffle.partitions=2",
    # Every statement's answer, errors too: the CLI otherwise stops at the first error.
    "--hiveconf",
    "hive.cli.errors.ignore=true",
)


def test_spark_sql_answers_sparks_statements_alike_with_and_without_the_extensions(
    tmp_path: Path,
) -> None:
    from tsfile_catalog import catalog_config
    from tsfile_catalog.spark_catalog.settings import as_arguments

    statements = written_statements(every=True)[:_COUNT]
    plugin = as_arguments(catalog_config(str(tmp_path / "warehouse"), name="ts")).split()
    runs = {}
    for mode, arguments in (("with", plugin), ("without", [])):
        folder = tmp_path / mode
        (folder / "run").mkdir(parents=True)
        script = folder / "statements.sql"
        directory = str(folder / "run")
        script.write_text("".join(f"{s.replace('{dir}', directory)};\n" for s in statements))
        command = [str(pyspark_home() / "bin" / "spark-sql"), "-S", *arguments, *_SETTINGS]
        runs[mode] = (
            subprocess.Popen(
                [*command, "-f", str(script)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=child_env(),
                cwd=folder,
            ),
            directory,
        )
    answers = {}
    for mode, (process, directory) in runs.items():
        out, err = process.communicate(timeout=900)
        answers[mode] = (_normalised(out, directory), _errors(err))
    (ours, our_errors), (theirs, their_errors) = answers["with"], answers["without"]
    # The statements ran, most answering rows, a few refused (the errors among them).
    assert len(theirs) > _COUNT and len(their_errors) >= 5, (theirs, their_errors)
    assert ours == theirs
    assert our_errors == their_errors


def _normalised(text: str, directory: str) -> list[str]:
    return [
        re.sub(r"#\d+L?", "#x", re.sub(r"^(Created Time\s+).*$", r"\1<time>", line))
        for line in text.replace(directory, "{dir}").splitlines()
    ]


def _errors(stderr: str) -> list[str]:
    """The error condition each failing statement printed, in order."""
    return re.findall(r"^(?:Error in query: )?\[([A-Z][A-Z0-9_.]*)\]", stderr, re.M)
