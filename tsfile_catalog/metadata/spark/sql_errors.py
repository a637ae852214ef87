"""Syntax errors in SQL terms: where (line, column), near what, and what was expected.

sqlglot's own messages name its classes (``Required keyword: 'expression' missing for <class
'sqlglot.expressions.core.GT'>``) and report where a token *ends*; users of ``catalog.sql`` and
of the ``where`` option need Spark's kind of message instead (PARSE_SYNTAX_ERROR: "syntax error
at or near 'x'"). Both parsers raise through :class:`~tsfile_catalog.metadata.spark.dialect.
SparkLiteralParser`, which marks in each error record whether the input ran out
(:data:`END_OF_INPUT`).
"""

from __future__ import annotations

import re

from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token

__all__ = [
    "END_OF_INPUT",
    "offset_position",
    "position",
    "snippet",
    "syntax_error_message",
    "token_error_message",
]

# Key the parser adds to each sqlglot error record: True when the input ran out.
END_OF_INPUT = "end_of_input"

_UNCLOSED = re.compile(r"Missing (\S+) from \d+:(\d+)")
_QUOTE_KINDS = {"'": "string literal", '"': "string literal", "`": "quoted identifier"}


def token_error_message(sql: str, error: TokenError) -> str:
    # The tokenizer's own message (e.g. "Missing ' from 1:7", a character offset) is on the
    # cause; the error itself only quotes 50 characters either side of where it stopped.
    unclosed = _UNCLOSED.fullmatch(str(error.__cause__ or ""))
    if unclosed is not None:
        delimiter = unclosed.group(1)
        offset = min(int(unclosed.group(2)), len(sql) - 1)
        if sql[offset] != delimiter:
            offset = max(sql.rfind(delimiter, 0, offset + 1), 0)
        kind = _QUOTE_KINDS.get(delimiter, "quoted text")
        return (
            f"syntax error: unclosed {kind} starting at {offset_position(sql, offset)}: "
            f"no closing {delimiter} before the end of input"
        )
    stopped = error.start + 50 if error.start else len(sql)
    return (
        f"syntax error: cannot read the SQL text near {offset_position(sql, stopped)} "
        f"(an unclosed comment or quote?): {snippet(sql[max(stopped - 20, 0) :])!r}"
    )


def offset_position(sql: str, offset: int) -> str:
    offset = min(offset, len(sql))
    line = sql.count("\n", 0, offset) + 1
    column = offset - sql.rfind("\n", 0, offset)
    return f"line {line}, column {column}"


def position(sql: str, token: Token) -> str:
    # sqlglot's Token.col is where the token ends; users look for where it starts.
    return offset_position(sql, token.start)


_TOKEN_REPR = re.compile(r"<Token token_type: TokenType\.(\w+), text: (.*?), line: .*?>")
# sqlglot descriptions that name its own classes or only restate "syntax error".
_OPAQUE_DESCRIPTION = re.compile(r"Required keyword|Invalid expression|<class|sqlglot", re.I)
_EXPECTED = re.compile(r"Expect(?:ed|ing) (.+?)(?: but got .*)?")


def syntax_error_message(sql: str, error: ParseError) -> str:
    """The first error of ``error`` as "syntax error at or near 'x' at line L, column C: …"."""
    if not error.errors:
        return f"syntax error in {snippet(sql)!r}"
    record = error.errors[0]
    token = str(record.get("highlight") or "")
    line, column = record.get("line"), record.get("col")
    if isinstance(column, int) and token and "\n" not in token:
        # sqlglot reports the column where the offending token ends.
        column -= len(token) - 1
    if record.get(END_OF_INPUT):
        message = (
            f"syntax error: unexpected end of input after {token!r} at line {line}, column {column}"
        )
    else:
        message = f"syntax error at or near {token!r} at line {line}, column {column}"
    detail = _readable_detail(str(record.get("description") or ""))
    return f"{message}: {detail}" if detail else message


def _readable_detail(description: str) -> str:
    # sqlglot describes tokens by their repr; name them by their text instead.
    description = _TOKEN_REPR.sub(
        lambda m: "end of input" if m.group(1) == "SENTINEL" else repr(m.group(2)), description
    )
    if not description or _OPAQUE_DESCRIPTION.search(description):
        return ""
    expected = _EXPECTED.fullmatch(description)
    if expected is not None:
        what = expected.group(1)
        return f"expected {what!r}" if len(what) == 1 else f"expected {_lower_first(what)}"
    return _lower_first(description)


def _lower_first(text: str) -> str:
    # "Expected table name" reads on after a colon as "expected table name"; keywords such
    # as "EXPLAIN PARTS" keep their case.
    return text[0].lower() + text[1:] if text[1:2].islower() else text


def snippet(sql: str, limit: int = 60) -> str:
    text = " ".join(sql.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
