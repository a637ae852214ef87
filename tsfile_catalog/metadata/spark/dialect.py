"""sqlglot's Spark dialect with Spark's own rules for string literals, and quoting by them.

Everything tsfile-catalog parses as Spark SQL (``catalog.sql`` statements, the ``where``
option) is read with this dialect, and every query the catalog rewrites is generated from the
tree it builds, so a literal must decode here exactly as Spark decodes it. sqlglot 30's Spark
dialect differs from Spark 4 in two places:

* A doubled quote inside a literal is an escaped quote in Spark (``'it''s'`` is ``it's``,
  ``"a""b"`` is ``a"b``); sqlglot ends the literal there and reads two adjacent literals,
  so ``'it''s'`` became ``CONCAT('it', 's')``, i.e. ``its``.
* Adjacent literals (``'a' 'b'``, ``R'a''b'``) are one literal in Spark's grammar
  (``stringLit+``), named ``ab`` as an output column; sqlglot made them a ``CONCAT`` call (and
  refused a raw literal followed by another).

Backslash escapes, ``\\u``/``\\U``/octal escapes and raw strings already match Spark.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError
from sqlglot.parser import SENTINEL_NONE
from sqlglot.parsers.spark import SparkParser
from sqlglot.tokens import Token, TokenType

from tsfile_catalog.metadata.spark.quoting import quote_identifier, quote_string
from tsfile_catalog.metadata.spark.sql_errors import END_OF_INPUT

__all__ = ["SparkDialect", "SparkLiteralParser", "quote_identifier", "quote_string"]


# Tokens Spark's grammar accepts in a run of adjacent string literals.
_STRING_TOKENS = frozenset({TokenType.STRING, TokenType.RAW_STRING})


class SparkLiteralParser(SparkParser):
    """Spark's parser, reading a run of adjacent string literals as one literal."""

    def raise_error(self, message: str, token: Token = SENTINEL_NONE) -> None:
        # sqlglot blames the last token when the input runs out, so its record cannot tell
        # "unexpected 'x'" from "the text ends after 'x'"; only the parser knows, so record it.
        at_end = not token and not self._curr
        try:
            super().raise_error(message, token)
        except ParseError as e:
            e.errors[-1][END_OF_INPUT] = at_end
            raise
        self.errors[-1].errors[-1][END_OF_INPUT] = at_end

    def _parse_atom(self) -> exp.Expr | None:
        # sqlglot's fast path for a lone literal steps aside only for STRING STRING runs.
        if self._starts_string_run():
            return None
        return super()._parse_atom()

    def _starts_string_run(self) -> bool:
        return (
            self._curr is not None
            and self._next is not None
            and self._curr.token_type in _STRING_TOKENS
            and self._next.token_type in _STRING_TOKENS
        )

    def _parse_primary(self) -> exp.Expr | None:
        if self._starts_string_run():
            # Token texts are already decoded (escapes resolved, raw text kept as written).
            text = ""
            while self._curr is not None and self._curr.token_type in _STRING_TOKENS:
                text += self._curr.text
                self._advance()
            return self.expression(exp.Literal.string(text))
        return super()._parse_primary()


class SparkDialect(Spark):
    """Spark SQL as Spark 4 reads string literals; use it as ``read=``/``dialect=``."""

    class Tokenizer(Spark.Tokenizer):
        # The backslash stays first: the generator escapes quotes with STRING_ESCAPES[0], and
        # Spark reads \' in either quoting. sqlglot only treats a quote character as an escape
        # when it is doubled, so '"' and "'" here mean exactly Spark's '' and "".
        STRING_ESCAPES = [*Spark.Tokenizer.STRING_ESCAPES, "'", '"']

    Parser = SparkLiteralParser
