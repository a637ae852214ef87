"""Every ```python and ```sql block in README.md and docs/*.md runs, so the docs cannot rot.

One test per file: its blocks run in order in one namespace (a later block may use what an
earlier one defined), in a fresh temporary directory as the working directory, with the shared
Spark session. SQL blocks run through ``catalog.sql`` with the ``catalog`` an earlier block
defined (else a catalog over ``./warehouse``), one statement at a time (a statement ends with
``;`` at the end of a line), and queries are collected so they really run.
A block preceded by the line ``<!-- no-test -->`` is skipped: syntax schematics, S3 URLs
(docs/architecture.md, "Docs are tested"). A page with the line ``<!-- needs: duckdb polars -->``
is skipped only when one of those optional extras is not installed (the test extra installs
them, so CI runs it).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NO_TEST = "<!-- no-test -->"
_NEEDS = re.compile(r"^<!-- needs: ([\w ]+) -->$", re.M)
_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.M | re.S)


def blocks(text: str) -> list[tuple[str, str, int]]:
    """(language, code, line) of each python/sql block not marked ``no-test``."""
    out = []
    for match in _FENCE.finditer(text):
        language = match.group(1)
        if language not in ("python", "sql"):
            continue
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        if before.strip() == NO_TEST:
            continue
        out.append((language, match.group(2), text.count("\n", 0, match.start()) + 1))
    return out


def test_blocks_are_found_and_markers_respected() -> None:
    text = "a\n```python\nx = 1\n```\n<!-- no-test -->\n```sql\nBAD\n```\n```sql\nSELECT 1\n```\n"
    assert blocks(text) == [("python", "x = 1\n", 2), ("sql", "SELECT 1\n", 9)]


def needed_modules(text: str) -> list[str]:
    """The optional modules a page's ``<!-- needs: ... -->`` lines name."""
    return [name for match in _NEEDS.finditer(text) for name in match.group(1).split()]


def test_needed_modules_are_read_from_the_marker() -> None:
    text = "# T\n\n<!-- needs: duckdb polars -->\n\ntext <!-- needs: x -->\n"
    assert needed_modules(text) == ["duckdb", "polars"]


_STATEMENT_END = re.compile(r";[ \t]*(?:--[^\n]*)?$", re.M)


def _run_sql(namespace: dict[str, Any], spark: SparkSession, code: str) -> None:
    if "catalog" not in namespace:
        from tsfile_catalog import Catalog

        namespace["catalog"] = Catalog(spark, "./warehouse", register_views=False)
    # A block may hold several statements, each ending with ';' at the end of a line.
    for statement in _STATEMENT_END.split(code):
        if statement.strip():
            result = namespace["catalog"].sql(statement)
            if isinstance(result, DataFrame):
                result.collect()


@pytest.mark.spark
@pytest.mark.parametrize("doc", DOCS, ids=[p.name for p in DOCS])
def test_doc_blocks_run(
    doc: Path, spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = doc.read_text(encoding="utf-8")
    found = blocks(text)
    if not found:
        return
    for module in needed_modules(text):
        pytest.importorskip(module, reason=f"{doc.name} needs the optional {module} extra")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": f"doc_{doc.stem}"}
    for language, code, line in found:
        try:
            if language == "python":
                exec(compile(code, f"{doc.name}:{line}", "exec"), namespace)  # noqa: S102
            else:
                _run_sql(namespace, spark, code)
        except Exception as e:
            raise AssertionError(f"{doc.name}, the {language} block at line {line}: {e}") from e
