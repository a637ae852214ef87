"""Moved to :mod:`tsfile_catalog.metadata.expressions.pruning`; this path keeps old imports
working."""

from __future__ import annotations

from tsfile_catalog.metadata.expressions.pruning import PartEvaluator, might_match, prune

__all__ = ["might_match", "prune", "PartEvaluator"]
