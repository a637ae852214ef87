"""Which texts the session extensions take as URL references, and through which catalog
(no Spark: the delegate's answers to the JVM's questions)."""

from __future__ import annotations

import pytest

from tsfile_catalog.exceptions import SqlError
from tsfile_catalog.spark_catalog.statements import claim
from tsfile_catalog.spark_catalog.url_tables import url_catalog, url_reference


def test_a_url_reference_is_named_by_its_canonical_text() -> None:
    found = url_reference("tsfile('/d/w', `VERSION` => 3)", ["ts"], "spark_catalog")
    assert found == {"catalog": "ts", "name": "tsfile('/d/w', version => 3)"}
    assert url_reference("tsfile.`/d/w`", ["ts"], "ts")["name"] == "tsfile('/d/w')"  # type: ignore[index]
    # A plain identifier is table ``weather`` of database ``tsfile``: Spark's.
    assert url_reference("tsfile.`weather`", ["ts"], "ts") is None


def test_the_current_tsfile_catalog_reads_it_else_the_first() -> None:
    assert url_catalog(["b", "a"], "B") == "b"
    assert url_catalog(["b", "a"], "spark_catalog") == "a"
    with pytest.raises(SqlError, match="needs a tsfile catalog"):
        url_catalog([], "spark_catalog")


def test_a_write_into_a_url_reference_is_refused() -> None:
    with pytest.raises(SqlError, match="INSERT needs a registered table name"):
        url_reference("tsfile.`/d/w`", ["ts"], "ts", write=True)


def test_describe_of_a_url_reference_is_the_catalogs_and_of_a_name_sparks() -> None:
    assert claim("DESCRIBE tsfile('/d/w')", ["ts"], "spark_catalog")["catalog"] == "ts"
    assert claim("DESC TABLE EXTENDED tsfile.`/d/w`", ["ts"], "spark_catalog")["ours"]
    assert claim("DESCRIBE tsfile.weather", ["ts"], "spark_catalog") == {"ours": False}
    refused = claim("DESCRIBE tsfile('/d/w', versio => 1)", ["ts"], "spark_catalog")
    assert refused["ours"] and "unknown setting 'versio'" in refused["refusal"]


def test_explain_parts_of_url_references_alone_needs_no_current_tsfile_catalog() -> None:
    both = "EXPLAIN PARTS SELECT * FROM tsfile('/d/w') AS a JOIN tsfile.`/d/x` AS b USING (time)"
    assert claim(both, ["ts"], "spark_catalog")["catalog"] == "ts"
    # A plain name is resolved by the current catalog, which must then be a tsfile one.
    refused = claim(
        "EXPLAIN PARTS SELECT * FROM tsfile('/d/w') JOIN db.t USING (time)",
        ["ts"],
        "spark_catalog",
    )
    assert "current catalog 'spark_catalog' is not a tsfile" in refused["refusal"]
    assert refused["catalog"] == "ts"  # runs the CALL that raises it


def test_a_call_of_the_sessions_own_tsfile_function_is_sparks() -> None:
    assert url_reference("tsfile('/d/w')", ["ts"], "ts", sessions_function=True) is None
