"""ALTER TABLE … ADD PART / DROP PART parse into their models and round-trip through SQL."""

from __future__ import annotations

import pytest

from tsfile_catalog.exceptions import SqlError, SqlParseError
from tsfile_catalog.sql import TableName
from tsfile_catalog.sql.parse import parse_statement
from tsfile_catalog.sql.statements import AlterTableAddPart, AlterTableDropPart


@pytest.mark.parametrize(
    "sql",
    [
        "ALTER TABLE db.t ADD PART OPTIONS (path '/d', format 'parquet', partition 'c:string')",
        "alter table db.t add part options ('path' = '/d', 'format' = 'parquet', "
        "'partition' = 'c:string')",
    ],
)
def test_add_part_parses_both_option_spellings(sql: str) -> None:
    statement = parse_statement(sql)
    assert statement == AlterTableAddPart(
        table=TableName("t", "db"),
        options={"path": "/d", "format": "parquet", "partition": "c:string"},
    )
    assert parse_statement(statement.to_sql()) == statement


def test_drop_part_parses_a_path_or_glob() -> None:
    statement = parse_statement("ALTER TABLE t DROP PART 's3://b/old/*.orc';")
    assert statement == AlterTableDropPart(table=TableName("t"), pattern="s3://b/old/*.orc")
    assert parse_statement(statement.to_sql()) == statement


@pytest.mark.parametrize(
    ("sql", "error", "message"),
    [
        ("ALTER TABLE t ADD PART '/d'", SqlParseError, r"expected OPTIONS \(path '<file"),
        (
            "ALTER TABLE t ADD PART OPTIONS (path '/a', format 'orc') "
            "ADD PART OPTIONS (path '/b', format 'orc')",
            SqlParseError,
            "at or near 'ADD' .*: ALTER TABLE takes one ADD PART or DROP PART per statement: run "
            "one statement each, or add many files in one commit with a folder or glob",
        ),
        (
            "ALTER TABLE t ADD PART OPTIONS (path '/a'), PART OPTIONS (path '/b')",
            SqlParseError,
            "at or near ',' .*takes one ADD PART or DROP PART per statement",
        ),
        ("ALTER TABLE t DROP PART 'a', DROP PART 'b'", SqlParseError, "one ADD PART or DROP"),
        ("ALTER TABLE t DROP PART", SqlParseError, "path or glob"),
        ("ALTER TABLE t DROP PART ''", SqlError, "DROP PART: the path or glob is empty"),
        ("ALTER TABLE t ADD PART OPTIONS (path '/a', PATH '/b')", SqlError, "'PATH' twice"),
    ],
)
def test_malformed_part_statements_are_refused(
    sql: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        parse_statement(sql)


def test_other_alter_table_actions_are_unchanged() -> None:
    # ADD COLUMNS / DROP PARTITION still reach their own handling, not the part parser.
    for sql in ("ALTER TABLE t ADD COLUMNS (a INT)", "ALTER TABLE t DROP PARTITION (a = 1)"):
        assert not isinstance(parse_statement(sql), (AlterTableAddPart, AlterTableDropPart))
