"""What the history records of ``UPDATE``, ``DELETE FROM`` and ``MERGE INTO`` through plain
``spark.sql``: the parameters ``Catalog.sql``'s own statement records
(:func:`~tsfile_catalog.sql.statements.row_level_parameters`: ``predicate``, an UPDATE's
``set``), besides Spark's counts (:mod:`.row_counts`).

The session extensions' rule (``HistoryParameters.java``) sees the statement as Spark parsed
it and hands over its text, its condition's text (Spark's SQL of the condition where there is
no text, a DataFrame's ``mergeInto``) and the columns an UPDATE sets, as written. The
parameters go with the statement's write (the option ``rewriteParameters``, recorded by
:mod:`tsfile_catalog.write.commit`) or its metadata delete (:mod:`.deletes`); they are text
for the history only, never evaluated. Without the extensions Spark's statements record none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

from tsfile_catalog.sql.parse import condition_sql, row_level_condition
from tsfile_catalog.sql.statements import row_level_parameters

__all__ = ["history_parameters"]


def history_parameters(request: Mapping[str, Any]) -> dict[str, str]:
    """The parameters of statement ``request["operation"]`` (``UPDATE``, ``DELETE``,
    ``MERGE``): those of ``Catalog.sql``'s parse of its text (``request["text"]``), the
    same statement through ``Catalog.sql`` recording the same; for a text it does not read
    (Spark's own syntax, or none), its condition (``request["condition"]``, normalized as
    the catalog's parser writes it) and its columns set (``request["set"]``)."""
    operation = cast(Literal["UPDATE", "DELETE", "MERGE"], str(request["operation"]).upper())
    text = request.get("text")
    parsed = None if text is None else row_level_condition(str(text), operation)
    if parsed is not None:
        condition, columns = parsed
        return row_level_parameters(operation, condition, columns)
    given = request.get("condition")
    return row_level_parameters(
        operation,
        None if given is None else condition_sql(str(given)),
        [str(c) for c in request.get("set") or ()],
    )
