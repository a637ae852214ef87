"""The refusals of an UPDATE or MERGE INTO of a catalog table that every engine shares,
from the statement and the table's schema alone (nothing is read): ``Catalog.sql``'s own
(:mod:`tsfile_catalog.sql.merge`) and Spark's copy-on-write through the plugin, which
``Catalog.sql`` hands the statement to (:meth:`~tsfile_catalog.sql.catalog.Catalog.sql`).

The table key is (TAG values, time): a MERGE's ON must equate each of its columns between
target and source (:func:`pinned_key`), and neither statement may SET them.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from tsfile_catalog.exceptions import SqlError
from tsfile_catalog.metadata.schema import TIME_COLUMN, TableSchema
from tsfile_catalog.sql.statements import Merge, Update
from tsfile_catalog.table.keyed import key_columns
from tsfile_catalog.table.update import set_refusal

__all__ = ["aliases", "check", "pinned_key"]


def check(statement: Update | Merge, schema: TableSchema, name: str) -> dict[str, exp.Expr]:
    """``Catalog.sql``'s refusals of an UPDATE or MERGE INTO of table ``name``, from the
    statement and the table's schema alone (nothing is read), whichever engine then runs it:
    ``Catalog.sql`` here or Spark's copy-on-write through the plugin
    (:meth:`~tsfile_catalog.sql.catalog.Catalog.sql`), so a statement is refused alike, with
    one line naming the statement and the column or key, in every session. A MERGE's
    :func:`pinned_key` (the source side of the ON condition for each key column).

    Raises:
        SqlError: a SET of a key column or an unknown one, a MERGE whose ON does not pin the
            key, or whose INSERT leaves a key column out.
    """
    if isinstance(statement, Update):
        _check_assignments(schema, [c for c, _ in statement.assignments], "UPDATE", name)
        return {}
    pins = pinned_key(statement.on, schema, *aliases(statement), name)
    for item in statement.clauses:
        if item.assignments is not None:
            columns = [c for c, _ in item.assignments]
            if item.action == "update":
                _check_assignments(schema, columns, "MERGE ... UPDATE", name)
            else:
                _check_insert(schema, columns, name)
    return pins


def aliases(statement: Merge) -> tuple[str, str | None]:
    """How a MERGE's columns name its target and its source (None: the source is unnamed)."""
    source = statement.source_alias or (
        statement.source.name.lower() if isinstance(statement.source, exp.Table) else None
    )
    return statement.alias or statement.table.name, source


def _check_assignments(
    schema: TableSchema, columns: Sequence[str], statement: str, name: str
) -> None:
    for column in columns:
        refusal = set_refusal(schema, column, f"{statement} {name}")
        if refusal is not None:
            raise SqlError(refusal)


def pinned_key(
    on: exp.Expr, schema: TableSchema, target: str, source: str | None, name: str
) -> dict[str, exp.Expr]:
    """The source side of the ON condition's equality for each key column (TAGs, ``time``).

    ``on``'s top-level AND terms must include ``<target>.<column> = <expression>`` (or
    ``<=>``, either way round) for every key column, where the expression reads no target
    column: the key then decides which target row a source row can match, so the merge
    changes rows by key.

    Raises:
        SqlError: naming the key columns the condition does not pin, and why they must be.
    """
    found: dict[str, exp.Expr] = {}
    for term in on.flatten() if isinstance(on, exp.And) else [on]:
        if not isinstance(term, (exp.EQ, exp.NullSafeEQ)):
            continue
        for left, right in ((term.this, term.expression), (term.expression, term.this)):
            column = _target_column(left, right, schema, target, source)
            if column is not None and column not in found:
                found[column] = right
    missing = [c for c in key_columns(schema) if c not in found]
    if missing:
        wanted = " AND ".join(f"{target}.{c} = <source>.{c}" for c in key_columns(schema))
        raise SqlError(
            f"MERGE INTO {name}: the ON condition must equate every key column of the "
            f"target with the source ({wanted}); "
            f"it does not pin {', '.join(missing)}. The table key is (TAG values, time): a "
            "source row must name the one target row it changes, so every TAG column and "
            "time must be equal"
        )
    return found


def _target_column(
    side: exp.Expr, other: exp.Expr, schema: TableSchema, target: str, source: str | None
) -> str | None:
    """The key column ``side`` names in the target, when ``other`` reads only the source."""
    if not isinstance(side, exp.Column):
        return None
    keys = key_columns(schema)
    name = side.name.lower()
    if name not in keys:
        return None
    qualifier = side.table.lower()
    columns = list(other.find_all(exp.Column))
    if any(c.table.lower() == target for c in columns):
        return None
    if qualifier == target:
        return name
    # An unqualified key column is the target's when the other side is the source's.
    if (
        not qualifier
        and source is not None
        and columns
        and all(c.table.lower() == source for c in columns)
    ):
        return name
    return None


def _check_insert(schema: TableSchema, columns: Sequence[str], name: str) -> None:
    unknown = [c for c in columns if c != TIME_COLUMN and schema.column(c) is None]
    if unknown:
        raise SqlError(
            f"MERGE ... INSERT into {name}: no column {', '.join(map(repr, unknown))} "
            f"(columns: {', '.join(schema.names)})"
        )
    missing = [c for c in key_columns(schema) if c not in columns]
    if missing:
        raise SqlError(
            f"MERGE ... INSERT into {name}: the time and TAG columns need values; missing "
            f"{', '.join(missing)}"
        )
