"""Read-only mappings for the fields of frozen dataclasses.

A frozen dataclass only stops rebinding its fields; a ``dict`` field could still be changed in
place by whoever holds the instance (or the caller that passed the dict in). Models copy such
fields into a :class:`~types.MappingProxyType` in ``__post_init__`` instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["empty_mapping", "frozen_mapping"]


def frozen_mapping(values: Mapping[str, str]) -> Mapping[str, str]:
    """A read-only copy of ``values`` (later changes to ``values`` do not show through)."""
    return MappingProxyType(dict(values))


def empty_mapping() -> Mapping[str, str]:
    """An empty read-only mapping, for ``field(default_factory=empty_mapping)``."""
    return MappingProxyType({})
