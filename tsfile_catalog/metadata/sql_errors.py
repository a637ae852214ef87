"""Moved to :mod:`tsfile_catalog.metadata.spark.sql_errors`; this path keeps old imports working."""

from __future__ import annotations

from tsfile_catalog.metadata.spark.sql_errors import (
    END_OF_INPUT,
    offset_position,
    position,
    snippet,
    syntax_error_message,
    token_error_message,
)

__all__ = [
    "END_OF_INPUT",
    "offset_position",
    "position",
    "snippet",
    "syntax_error_message",
    "token_error_message",
]
