"""Every ```python and ```sql block in README.md and docs/*.md runs, so the docs cannot rot.

One test per file: its blocks run in order in one namespace (a later block may use what an
earlier one defined), in a fresh temporary directory as the working directory, with the shared
Spark session, whose catalogs are loaded afresh for each file (a page's ``configure(...,
name="ts")`` points ``ts`` at its own warehouse). SQL blocks run through ``catalog.sql`` with
the ``catalog`` an earlier block defined (else a catalog over ``./warehouse``), or, on a page
with the line ``<!-- sql blocks: spark.sql -->``, through ``spark.sql`` of the ``spark`` an
earlier block defined; one statement at a time (a statement ends with ``;`` at the end of a
line), and queries are collected so they really run.
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
SPARK_SQL_BLOCKS = "<!-- sql blocks: spark.sql -->"
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


def _run_sql(namespace: dict[str, Any], spark: SparkSession, code: str, *, plain: bool) -> None:
    """Run a SQL block's statements through ``catalog.sql``, or ``spark.sql`` when ``plain``
    (with the page's own ``spark``: the session its first block configured)."""
    if plain:
        run = namespace["spark"].sql
    else:
        if "catalog" not in namespace:
            from tsfile_catalog import Catalog

            namespace["catalog"] = Catalog(spark, "./warehouse", register_views=False)
        run = namespace["catalog"].sql
    # A block may hold several statements, each ending with ';' at the end of a line.
    for statement in _STATEMENT_END.split(code):
        if statement.strip():
            result = run(statement)
            if isinstance(result, DataFrame):
                result.collect()


def _fresh_catalogs(spark: SparkSession) -> None:
    """Forget the session's loaded catalogs and its current catalog and namespace, as a new
    program's session has none: Spark loads a catalog once per name and keeps it, so a page
    configuring ``ts`` over its own warehouse would otherwise talk to the previous page's
    ``ts`` (and a page's ``USE`` would outlive it)."""
    spark._jsparkSession.sessionState().catalogManager().reset()


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
    _fresh_catalogs(spark)
    plain = SPARK_SQL_BLOCKS in text.splitlines()
    namespace: dict[str, Any] = {"__name__": f"doc_{doc.stem}"}
    try:
        for language, code, line in found:
            try:
                if language == "python":
                    exec(compile(code, f"{doc.name}:{line}", "exec"), namespace)  # noqa: S102
                else:
                    _run_sql(namespace, spark, code, plain=plain)
            except Exception as e:
                raise AssertionError(f"{doc.name}, the {language} block at line {line}: {e}") from e
    finally:
        _fresh_catalogs(spark)  # the next test module's catalogs are its own


def test_a_page_may_run_its_sql_blocks_through_spark_sql() -> None:
    # The marker is a line of its own: a page that only mentions it in text is not marked.
    assert SPARK_SQL_BLOCKS in f"# T\n\n{SPARK_SQL_BLOCKS}\n".splitlines()
    assert SPARK_SQL_BLOCKS not in f"text `{SPARK_SQL_BLOCKS}`\n".splitlines()


_HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.M)
_LINK = re.compile(r"\]\((?![a-z]+:)([^)\s]*?\.md)?(#[^)\s]*)?\)")


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation but ``-`` and
    ``_`` dropped, spaces as ``-``, a repeated one numbered (``x``, ``x-1``, ...). Fenced
    blocks hold no headings."""
    text = _FENCE.sub("", text)
    seen: dict[str, int] = {}
    out = set()
    for heading in _HEADING.findall(text):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        out.add(slug if count == 0 else f"{slug}-{count}")
    return out


def test_links_are_relative_pages_and_anchors() -> None:
    text = "[a](http://x.org/y.md) [b](#c) [d](e.md) [f](g.md#h) [i](j.png)"
    assert links(text) == [("", "c"), ("e.md", ""), ("g.md", "h")]


def test_anchors_are_githubs() -> None:
    text = (
        "# SQL: the `Catalog`\n```\n# not a heading\n```\n"
        "## ALTER TABLE ADD PART / DROP PART\n## A\n## A\n"
    )
    assert anchors(text) == {"sql-the-catalog", "alter-table-add-part--drop-part", "a", "a-1"}


def links(text: str) -> list[tuple[str, str]]:
    """(page, anchor) of each relative link to a Markdown page or an anchor of this one
    (not a URL with a scheme)."""
    return [
        (page or "", anchor.lstrip("#")) for page, anchor in _LINK.findall(text) if page or anchor
    ]


@pytest.mark.parametrize("doc", DOCS, ids=[p.name for p in DOCS])
def test_cross_links_resolve(doc: Path) -> None:
    """Every link to another page (``[x](maintenance.md#vacuum)``), or to a heading of its
    own (``[x](#credentials)``), names a page that exists and a heading it has."""
    broken = []
    for page, anchor in links(doc.read_text(encoding="utf-8")):
        target = (doc.parent / page).resolve() if page else doc
        if not target.is_file():
            broken.append(f"{page} (no such page)")
        elif anchor and anchor not in anchors(target.read_text(encoding="utf-8")):
            broken.append(f"{page}#{anchor} (no such heading)")
    assert broken == [], f"{doc.name} links to"


def sections(text: str, level: int) -> list[tuple[str, str]]:
    """(heading, body) of each heading of ``level`` (3 for ``###``) outside fenced blocks; a
    body runs to the next heading of that level or above, so it holds its subsections."""
    out: list[tuple[str, list[str]]] = []
    fenced = False
    current: list[str] | None = None
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            fenced = not fenced
        hashes = len(line) - len(line.lstrip("#"))
        if not fenced and 0 < hashes <= level and line[hashes : hashes + 1] == " ":
            current = None
            if hashes == level:
                current = []
                out.append((line[hashes:].strip(), current))
            continue
        if current is not None:
            current.append(line)
    return [(heading, "".join(body)) for heading, body in out]


def test_sections_hold_their_subsections_and_no_fenced_comment_splits_them() -> None:
    text = "## S\n### A\nx\n```python\n# comment\n```\n#### A1\ny\n### B\nz\n## T\nw\n"
    assert sections(text, 3) == [("A", "x\n```python\n# comment\n```\n#### A1\ny\n"), ("B", "z\n")]


def _spark_first(language: str, code: str) -> bool:
    """Whether a block of docs/sql.md shows ``spark.sql`` first: a sql block (this page runs
    them through ``spark.sql``), or Python calling Spark before any ``catalog.sql``."""
    if language == "sql":
        return True
    spark = re.search(r"\bspark\.(sql|table|read)\b", code)
    catalog = code.find("catalog.sql(")
    return spark is not None and (catalog < 0 or spark.start() < catalog)


def test_sql_md_shows_each_statement_through_spark_sql_first() -> None:
    """Each statement's section of docs/sql.md opens its tested examples with the
    ``spark.sql`` form (a sql block, which this page runs through ``spark.sql``, or Python
    calling it), before any ``catalog.sql``: ``Catalog.sql`` is the Python front end of the
    same statements, shown where it differs."""
    text = (ROOT / "docs" / "sql.md").read_text(encoding="utf-8")
    assert SPARK_SQL_BLOCKS in text.splitlines()
    statements = text.split("\n## Statements\n", 1)[1].split("\n## ", 1)[0]
    found = sections("## Statements\n" + statements, 3)
    assert len(found) > 20
    wrong = []
    for heading, body in found:
        if heading == "Everything else":  # the Catalog's parser; Spark's statements are Spark's
            continue
        tested = blocks(body)
        if not tested or not _spark_first(*tested[0][:2]):
            wrong.append(heading)
    assert wrong == [], "sections of docs/sql.md whose first tested example is not spark.sql"


_CLIENT_SCRIPT = re.compile(r"\$SPARK_HOME/(s?bin)/([\w.-]+)")


def test_the_client_scripts_spark_catalog_md_names_are_pysparks_or_said_missing() -> None:
    """docs/spark-catalog.md's clients run from ``$SPARK_HOME``, which may be PySpark's own
    installation: a script it names that PySpark lacks (``start-thriftserver.sh``) must be
    said to be missing there, with the command that replaces it."""
    import pyspark

    home = Path(pyspark.__file__).parent
    text = (ROOT / "docs" / "spark-catalog.md").read_text(encoding="utf-8")
    named = set(_CLIENT_SCRIPT.findall(text))
    assert ("bin", "spark-sql") in named and ("bin", "beeline") in named
    for folder, script in named:
        if not (home / folder / script).exists():
            assert f"PySpark's own `{folder}/` has none" in text, f"{folder}/{script}"


@pytest.mark.spark
def test_the_dbapi_example_shows_a_statement_the_catalog_refuses(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The PyHive example's ``try`` holds a statement the catalog refuses (it is not run
    against a server here; the refusal is the catalog's, whatever the client): a statement
    that succeeds would change the reader's table instead of showing an error."""
    from pyspark.errors import AnalysisException

    import tsfile_catalog

    text = (ROOT / "docs" / "spark-catalog.md").read_text(encoding="utf-8")
    example = next(code for language, code in _all_blocks(text) if "from pyhive" in code)
    statement = re.search(r'try:\n\s+cursor\.execute\("([^"]+)"\)', example)
    assert statement is not None
    _fresh_catalogs(spark)
    try:
        session = tsfile_catalog.configure(
            SparkSession.builder, warehouse=str(tmp_path / "wh"), name="ts"
        ).getOrCreate()
        session.sql(
            "CREATE TABLE ts.db.weather (time TIMESTAMP, city STRING, device STRING, temp "
            "DOUBLE) USING tsfile TBLPROPERTIES ('tagColumns' = 'city,device')"
        )
        with pytest.raises(AnalysisException) as refused:
            session.sql(statement.group(1))
        assert "cannot rename TAG column 'city'" in str(refused.value).splitlines()[0]
    finally:
        _fresh_catalogs(spark)


def _all_blocks(text: str) -> list[tuple[str, str]]:
    """(language, code) of every fenced block, ``no-test`` ones included."""
    return [(m.group(1), m.group(2)) for m in _FENCE.finditer(text)]
