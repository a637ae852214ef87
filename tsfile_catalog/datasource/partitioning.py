"""Kept for existing imports: slice planning is pure and lives in
:mod:`tsfile_catalog.metadata.slices`, where the Spark-free scan uses it too."""

from __future__ import annotations

from tsfile_catalog.metadata.slices import FileSlice, estimated_rows, matching_devices, plan_slices

__all__ = ["FileSlice", "plan_slices", "estimated_rows", "matching_devices"]
