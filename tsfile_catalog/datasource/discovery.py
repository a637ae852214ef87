"""Moved to :mod:`tsfile_catalog.datasource.source`; kept so old imports work."""

from tsfile_catalog.datasource.source import resolve

__all__ = ["resolve"]
