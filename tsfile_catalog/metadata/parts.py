"""A part of a table: its file, its statistics, and the rules its path follows.

The statistics themselves are :mod:`tsfile_catalog.metadata.stats` (re-exported here, where
they were first defined); their lazily decoded JSON forms are
:mod:`tsfile_catalog.metadata.lazy_stats`. A part read from a commit file stays a
:class:`PendingPart` (its checked JSON) until something needs the ``PartFile``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeAlias

from tsfile_catalog.exceptions import CorruptManifestError
from tsfile_catalog.metadata.lazy_stats import (
    DeviceList,
    FieldStatsMap,
    SeriesStatsMap,
    TagStatsMap,
    devices_from_json,
    json_object,
)
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.metadata.stats import (
    MAX_DEVICES,
    MAX_TAG_VALUES,
    DeviceStats,
    FieldStats,
    SeriesStats,
    StatValue,
    TagStats,
    device_fields_json,
    kept_double_sum,
    tag_stats_from_devices,
)

__all__ = [
    "MAX_DEVICES",
    "MAX_TAG_VALUES",
    "DeviceStats",
    "SeriesStats",
    "TagStats",
    "FieldStats",
    "PartFile",
    "PendingPart",
    "PartEntry",
    "built_part",
    "validate_relative_path",
    "check_relative_path",
    "validate_external_url",
    "is_absolute_url",
    "PLAIN_PATH",
    "tag_stats_from_devices",
    "kept_double_sum",
    # Re-exported from stats.py and lazy_stats.py, where they now live.
    "StatValue",
    "DeviceList",
    "FieldStatsMap",
    "SeriesStatsMap",
    "TagStatsMap",
    "device_fields_json",
    "devices_from_json",
]


# A relative path of segments that neither start with a dot nor hold ':' or '\\' nor are
# empty: one that validate_relative_path accepts as it is (normal, inside the table root).
# Checked first (and by the Parquet checkpoint, vectorised): most paths need nothing more.
_SEG = r"[A-Za-z0-9_=+-][A-Za-z0-9_.=+-]*"
PLAIN_PATH = f"^{_SEG}(/{_SEG})*$"
_PLAIN = re.compile(PLAIN_PATH)


def validate_relative_path(path: str) -> str:
    """Reject part paths that are absolute, carry a scheme, or escape the table root."""
    if _PLAIN.fullmatch(path):
        return path
    return check_relative_path(path)


def check_relative_path(path: str) -> str:
    """:func:`validate_relative_path` without its shortcut for plain paths (what the
    shortcut must agree with)."""
    if not path or "://" in path or path.startswith(("/", "\\")) or ":" in path.split("/")[0]:
        raise CorruptManifestError(
            f"part path {path!r} must be relative to the table root (no scheme, no leading /)"
        )
    normalized = posixpath.normpath(path)
    if normalized.startswith("..") or "\\" in path or normalized != path.rstrip("/"):
        raise CorruptManifestError(
            f"part path {path!r} escapes or is not normal under the table root"
        )
    return path


def validate_external_url(path: str) -> str:
    """Require the absolute location an external part records (``scheme://…`` or ``/…``).

    External parts live wherever the user keeps them, so unlike a table's own parts their
    path is never taken relative to the table root.
    """
    if not path or not ("://" in path or path.startswith("/")) or "\\" in path:
        raise CorruptManifestError(
            f"external part path {path!r} must be an absolute URL (scheme:// or a leading /)"
        )
    return path


def is_absolute_url(path: str) -> bool:
    """Whether a part path is an external part's absolute URL (internal paths never are:
    :func:`validate_relative_path` refuses a scheme or a leading ``/``)."""
    return "://" in path or path.startswith("/")


@dataclass(frozen=True, slots=True)
class PartFile:
    """A part of a table: a data file and its statistics.

    ``path`` is relative to the table root, or for an ``external`` part (a Parquet, ORC or
    CSV file added in place, never owned by the table) its absolute URL. ``devices`` is None
    when the part holds more than :data:`MAX_DEVICES` devices (then only ``tags`` min/max
    prune). ``read_options`` (the time column, its unit, CSV dialect) and
    ``partition_values`` (TAG values a Hive-style directory gives every row) tell a reader
    how an external file's rows become the table's; both are empty for internal parts.
    ``source_stamp`` says which bytes an external part's statistics describe (size and
    modification time, or the store's ETag, when it was added): a read of a file that no
    longer matches fails instead of answering with stale statistics. None for internal parts
    and for external parts recorded before it existed.
    """

    path: str
    format: str
    size_bytes: int
    row_count: int
    min_time: int | None
    max_time: int | None
    devices: Sequence[DeviceStats] | None
    tags: Mapping[str, TagStats] = field(default_factory=dict)
    fields: Mapping[str, FieldStats] = field(default_factory=dict)
    external: bool = False
    schema_id: int = 0
    added_version: int = -1
    read_options: Mapping[str, str] = field(default_factory=dict)
    partition_values: Mapping[str, str] = field(default_factory=dict)
    source_stamp: str | None = None
    sequence: int | None = None

    def with_version(self, version: int, schema_id: int) -> PartFile:
        return replace(self, added_version=version, schema_id=schema_id)

    @property
    def key_sequence(self) -> int:
        """Which write this part's rows belong to, for the table key (``key.duplicates =
        last``): of two rows with the same (TAG values, time), the one in the part with the
        larger ``key_sequence`` wins; parts of equal sequence are one write, whose own
        ``onDuplicate`` rules already held.

        A written part's sequence is the version that added it. A rewrite (OPTIMIZE, DELETE,
        UPDATE's copy-on-write) re-adds old rows at a later version, so it records the
        sequence of what it rewrote in ``sequence``: otherwise a rewritten old row would win
        over a newer row that replaced it. RESTORE keeps each part's sequence for the same
        reason.
        """
        return self.added_version if self.sequence is None else self.sequence

    def rewritten_from(self, sources: Sequence[PartFile]) -> PartFile:
        """This new part as the rewrite of ``sources`` (the largest of their sequences:
        exact when the sources hold every part that shares a (device, time) with any of
        them, which :func:`tsfile_catalog.metadata.key.closed_groups` guarantees)."""
        if not sources:
            return self
        return replace(self, sequence=max(p.key_sequence for p in sources))

    def to_json(self, field_types: Mapping[str, DataType]) -> dict[str, Any]:
        out = self._json_body(field_types)
        if self.external:
            # Only external parts carry these, so internal parts keep format_version 1 bytes.
            out["read_options"] = dict(self.read_options)
            out["partition_values"] = dict(self.partition_values)
            if self.source_stamp is not None:
                # Optional: parts recorded without it read as before (no check).
                out["source_stamp"] = self.source_stamp
        if self.sequence is not None:
            # Optional, written only by rewrites: an earlier reader ignores it (and reads a
            # ``key.duplicates = last`` table as ``keep`` anyway).
            out["sequence"] = self.sequence
        return out

    def _json_body(self, field_types: Mapping[str, DataType]) -> dict[str, Any]:
        return {
            "path": self.path,
            "format": self.format,
            "external": self.external,
            "size_bytes": self.size_bytes,
            "row_count": self.row_count,
            "min_time": self.min_time,
            "max_time": self.max_time,
            "devices": None if self.devices is None else [d.to_json() for d in self.devices],
            **device_fields_json(self.devices, field_types),
            "tags": {k: v.to_json() for k, v in self.tags.items()},
            "fields": {
                k: v.to_json(field_types.get(k, DataType.STRING)) for k, v in self.fields.items()
            },
            "schema_id": self.schema_id,
            "added_version": self.added_version,
        }

    @classmethod
    def from_json(
        cls,
        obj: Mapping[str, Any],
        field_types: Mapping[str, DataType],
        *,
        source: str | None = None,
    ) -> PartFile:
        """``source`` (the manifest file) is named by errors of the lazily decoded maps."""
        return PendingPart.of_json(obj, field_types, source=source).part()


class PendingPart:
    """A part as a commit file records it: its parsed JSON, checked as
    :meth:`PartFile.from_json` checks it, built into that :class:`PartFile` (once) when first
    used.

    A cold open replays every part added since the checkpoint, and a plan keeps few of them:
    building each ``PartFile`` (and its lazily decoded statistics) cost more than parsing
    the JSON. Replaying commits and the columnar pre-filter read the scalars exposed here
    (path, format, external, row count, time range); a damaged file still fails when read,
    since every check runs here, and building cannot fail.
    """

    __slots__ = ("_checked", "_devices", "_part", "_source", "_types")

    def __init__(
        self,
        checked: tuple[Any, ...],
        devices: Any,
        field_types: Mapping[str, DataType],
        source: str | None,
    ) -> None:
        self._checked = checked
        self._devices = devices
        self._types = field_types
        self._source = source
        self._part: PartFile | None = None

    @classmethod
    def of_json(
        cls,
        obj: Mapping[str, Any],
        field_types: Mapping[str, DataType],
        *,
        source: str | None = None,
    ) -> PendingPart:
        """Check the part JSON ``obj`` (raising what decoding it would raise).

        Raises:
            CorruptManifestError: the path is not one a part may have.
            ValueError, TypeError, KeyError, AttributeError, OverflowError: a key is
                missing or of the wrong type (the caller names the file).
        """
        external = bool(obj.get("external", False))
        path = str(obj["path"])
        devices = obj.get("devices")
        if devices is not None and not isinstance(devices, (list, dict, str)):
            # What building its DeviceList (list(devices)) would raise, raised now.
            raise TypeError(f"'{type(devices).__name__}' object is not iterable")
        stamp = obj.get("source_stamp")
        sequence = obj.get("sequence")
        checked = (
            validate_external_url(path) if external else validate_relative_path(path),
            str(obj["format"]),
            external,
            int(obj["size_bytes"]),
            int(obj["row_count"]),
            obj.get("min_time"),
            obj.get("max_time"),
            _strings(obj.get("read_options")),
            _strings(obj.get("partition_values")),
            json_object(obj.get("tags") or {}),
            json_object(obj.get("fields") or {}),
            int(obj.get("schema_id", 0)),
            int(obj.get("added_version", -1)),
            None if stamp is None else str(stamp),
            None if sequence is None else int(sequence),
            None if devices is None else obj.get("device_fields"),
        )
        return cls(checked, devices, field_types, source)

    @property
    def path(self) -> str:
        path: str = self._checked[0]
        return path

    @property
    def format(self) -> str:
        format: str = self._checked[1]
        return format

    @property
    def external(self) -> bool:
        external: bool = self._checked[2]
        return external

    @property
    def row_count(self) -> int:
        rows: int = self._checked[4]
        return rows

    @property
    def min_time(self) -> int | None:
        time: int | None = self._checked[5]
        return time

    @property
    def max_time(self) -> int | None:
        time: int | None = self._checked[6]
        return time

    def part(self) -> PartFile:
        """The part; the same object every time (a benign race: two threads may build it)."""
        built = self._part
        if built is None:
            built = self._part = self._build()
        return built

    def _build(self) -> PartFile:
        (
            path,
            format,
            external,
            size_bytes,
            row_count,
            min_time,
            max_time,
            read_options,
            partition_values,
            tags,
            fields,
            schema_id,
            added_version,
            source_stamp,
            sequence,
            device_fields,
        ) = self._checked
        devices, types, source = self._devices, self._types, self._source
        return PartFile(
            path=path,
            format=format,
            external=external,
            read_options=read_options,
            partition_values=partition_values,
            size_bytes=size_bytes,
            row_count=row_count,
            min_time=min_time,
            max_time=max_time,
            # Decoded when first read: a plan reads the devices of the parts it keeps only.
            devices=None
            if devices is None
            else DeviceList.of_json(devices, device_fields, types, source=source),
            # Decoded when first read: a plan reads the TAG statistics of the parts it keeps.
            tags=TagStatsMap(tags, {}, source=source),
            # Decoded when first read too: only a predicate on a FIELD reads them.
            fields=FieldStatsMap(fields, types, source=source),
            schema_id=schema_id,
            added_version=added_version,
            source_stamp=source_stamp,
            sequence=sequence,
        )

    def __repr__(self) -> str:
        return f"PendingPart({self.path!r})"


# A snapshot's part before or after it is built (what replaying commits keeps).
PartEntry: TypeAlias = PartFile | PendingPart


def built_part(entry: PartEntry) -> PartFile:
    """The :class:`PartFile` of ``entry``, built if it is still pending."""
    return entry if isinstance(entry, PartFile) else entry.part()


def _strings(obj: Mapping[str, Any] | None) -> dict[str, str]:
    """A JSON object of strings (absent on internal parts: the common case costs nothing)."""
    return {str(k): str(v) for k, v in obj.items()} if obj else {}
