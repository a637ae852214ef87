"""Part statistics decoded from their JSON only when something reads them.

A 10,000-part checkpoint lists a million devices; a plan looks at the devices of the few
parts its time range and TAG sets keep. Building every :class:`DeviceStats` up front would
cost seconds and hundreds of megabytes, so the Parquet checkpoint keeps each part's device
list as the JSON text the commit file has (``PartFile.devices``' ``to_json``), and a commit
file's parsed JSON list is kept as parsed: both are handed out as a :class:`DeviceList`, an
immutable sequence equal to the tuple it decodes to. The decoded tuple is memoised (a benign
race: two threads decode the same value). A list that does not decode raises
:class:`CorruptManifestError` when first read, naming the file when the caller gave it.
A Parquet checkpoint's FIELD statistics are a :class:`FieldStatsMap` the same way: a plan
whose predicate names no FIELD never decodes them; a commit file's TAG statistics are a
:class:`TagStatsMap`: a plan builds the parts its time range keeps, and only those are
ever asked for their TAG statistics. A device's per-FIELD statistics are a
:class:`SeriesStatsMap`: planning reads every kept part's devices (TAGs, time range, row
count), and only aggregates read those statistics.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, TypeVar, overload

from tsfile_catalog.exceptions import CorruptManifestError
from tsfile_catalog.metadata.schema import DataType
from tsfile_catalog.metadata.stats import (
    DeviceStats,
    FieldStats,
    SeriesStats,
    TagStats,
    device_fields_json,
)

__all__ = [
    "DeviceList",
    "FieldStatsMap",
    "SeriesStatsMap",
    "TagStatsMap",
    "devices_from_json",
    "json_object",
]

_V = TypeVar("_V")

_DECODE_ERRORS = (ValueError, TypeError, KeyError, AttributeError, OverflowError, RecursionError)


def _corrupt(what: str, source: str | None, error: Exception) -> CorruptManifestError:
    where = "the manifest" if source is None else f"file {source}"
    return CorruptManifestError(f"{what} in {where} is corrupt: {error}")


class DeviceList(Sequence["DeviceStats"]):
    """The devices of one part, decoded on first use from ``raw``: the JSON text of an array
    of ``DeviceStats.to_json()``, that array already parsed, or a function fetching the text
    (a Parquet checkpoint reads its device column only when a plan first needs it).

    A part whose devices carry per-FIELD statistics (``DeviceStats.fields``) is the object
    ``{"devices": [...], "device_fields": [...]}`` instead of the bare array (the part JSON's
    two keys, see ``PartFile.to_json``), typed by ``field_types``.
    """

    __slots__ = ("_decoded", "_field_types", "_raw", "_source")

    def __init__(
        self,
        raw: str | list[Any] | dict[str, Any] | Callable[[], str],
        *,
        source: str | None = None,
        field_types: Mapping[str, DataType] | None = None,
    ) -> None:
        self._raw: str | list[Any] | dict[str, Any] | Callable[[], str] | None = raw
        self._source = source
        self._field_types = field_types or {}
        self._decoded: tuple[DeviceStats, ...] | None = None

    @classmethod
    def of_json(
        cls,
        devices: list[Any],
        device_fields: list[Any] | None,
        field_types: Mapping[str, DataType],
        *,
        source: str | None = None,
    ) -> DeviceList:
        """The lazy list of a part JSON's ``devices`` and optional ``device_fields`` keys."""
        raw: list[Any] | dict[str, Any] = (
            list(devices)
            if device_fields is None
            else {"devices": devices, "device_fields": device_fields}
        )
        return cls(raw, source=source, field_types=field_types)

    @property
    def raw_json(self) -> str | None:
        """The undecoded JSON text, if that is what this list holds (encoders reuse it)."""
        raw = self._raw
        if callable(raw):
            raw = self._raw = raw()
        return raw if isinstance(raw, str) else None

    def _devices(self) -> tuple[DeviceStats, ...]:
        decoded = self._decoded
        if decoded is None:
            raw = self._raw
            assert raw is not None
            try:
                if callable(raw):
                    raw = raw()
                parsed = json.loads(raw) if isinstance(raw, str) else raw
                if isinstance(parsed, dict):
                    with_fields = devices_from_json(
                        parsed["devices"],
                        parsed.get("device_fields"),
                        self._field_types,
                        source=self._source,
                    )
                    if with_fields is None:
                        raise ValueError("a part's devices are null")
                    decoded = with_fields
                else:
                    decoded = tuple(DeviceStats.from_json(d) for d in parsed)
            except (CorruptManifestError, *_DECODE_ERRORS) as e:
                # Only checked when first read: the file stays the one to blame.
                raise _corrupt("a part's device list", self._source, e) from e
            self._decoded, self._raw = decoded, None
        return decoded

    def __len__(self) -> int:
        return len(self._devices())

    @overload
    def __getitem__(self, index: int) -> DeviceStats: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[DeviceStats, ...]: ...

    def __getitem__(self, index: int | slice) -> DeviceStats | tuple[DeviceStats, ...]:
        return self._devices()[index]

    def __iter__(self) -> Iterator[DeviceStats]:
        if self._decoded is not None:
            return iter(self._decoded)
        raw = self._raw
        if callable(raw):
            raw = self._raw = raw()
        if isinstance(raw, str) and raw.startswith("[", _skip_space(raw, 0)):
            return self._iter_parsed(_array_items(raw))
        parsed = self._parsed()
        if not isinstance(parsed, list):
            # Devices with FIELD statistics (decoded together), a list decoded meanwhile by
            # another thread, or JSON that is no list: the full decode (which names errors).
            return iter(self._devices())
        return self._iter_parsed(parsed)

    def _parsed(self) -> list[Any] | dict[str, Any] | None:
        """The parsed JSON (kept as parsed, so a later decode does not parse it again)."""
        raw = self._raw
        if raw is None:
            return None
        try:
            if callable(raw):
                raw = raw()
            parsed = json.loads(raw) if isinstance(raw, str) else raw
        except (CorruptManifestError, *_DECODE_ERRORS) as e:
            raise _corrupt("a part's device list", self._source, e) from e
        if not isinstance(parsed, (list, dict)):
            return None
        self._raw = parsed
        return parsed

    def _iter_parsed(self, parsed: Iterable[Any]) -> Iterator[DeviceStats]:
        """Devices parsed and built one at a time: pruning stops at the first device that
        may match, so a part whose first device matches costs one device's JSON and one
        DeviceStats, not all of them. A complete pass memoises the tuple, as a full decode
        does (and so has checked all of the JSON)."""
        built = []
        items = iter(parsed)
        while True:
            try:
                item: Any = next(items, _END)
                if item is _END:
                    break
                device = DeviceStats.from_json(item)
            except _DECODE_ERRORS as e:
                raise _corrupt("a part's device list", self._source, e) from e
            built.append(device)
            yield device
        if self._decoded is None:
            self._decoded, self._raw = tuple(built), None

    def __eq__(self, other: object) -> bool:
        # Equal to the tuple it stands for (tuple.__eq__ defers to this for a DeviceList).
        if isinstance(other, DeviceList):
            return self._devices() == other._devices()
        if isinstance(other, tuple):
            return self._devices() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._devices())

    def __repr__(self) -> str:
        return repr(self._devices())

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickles (to Spark executors) as the plain tuple: nothing lazy crosses processes.
        return (tuple, (self._devices(),))

    @staticmethod
    def encode(devices: Sequence[DeviceStats], field_types: Mapping[str, DataType]) -> str:
        """The JSON text of ``devices`` (with their FIELD statistics when any has some),
        reusing a still-undecoded list's text."""
        if isinstance(devices, DeviceList) and devices.raw_json is not None:
            return devices.raw_json
        listed = [d.to_json() for d in devices]
        fields = device_fields_json(devices, field_types)
        body: list[Any] | dict[str, Any] = {"devices": listed, **fields} if fields else listed
        return json.dumps(body, separators=(",", ":"))


_END = object()
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip_space(text: str, at: int) -> int:
    """The index of the first character at or after ``at`` that is no JSON whitespace."""
    found = _SPACE.match(text, at)
    assert found is not None  # the pattern matches the empty string
    return found.end()


def _array_items(text: str) -> Iterator[Any]:
    """The elements of the JSON array ``text``, each parsed when asked for; anything that is
    not exactly one array (bad element, separator or trailing text) raises ValueError when
    the parse reaches it."""
    at = _skip_space(text, 0)
    if not text.startswith("[", at):
        raise ValueError("the device list is not a JSON array")
    at = _skip_space(text, at + 1)
    if text.startswith("]", at):
        at += 1
    else:
        while True:
            item, at = _DECODER.raw_decode(text, at)
            yield item
            at = _skip_space(text, at)
            if text.startswith("]", at):
                at += 1
                break
            if not text.startswith(",", at):
                raise ValueError(f"expected ',' or ']' at character {at}")
            at = _skip_space(text, at + 1)
    if _skip_space(text, at) != len(text):
        raise ValueError(f"extra data after the device list at character {at}")


class _LazyMap(Mapping[str, _V]):
    """A name -> statistics mapping decoded from ``raw`` (a JSON object, as text or parsed)
    on first use, typed by ``types``: looking one name up decodes that entry only (a
    predicate on one FIELD of a 100,000-part table reads one statistic per part, not all of
    them); iterating decodes them all. Anything that does not decode raises
    :class:`CorruptManifestError` naming ``source`` then. Pickles as the plain dict it
    decodes to."""

    __slots__ = ("_decoded", "_entries", "_raw", "_some", "_source", "_types")
    _what: ClassVar[str]

    def __init__(self, raw: Any, types: Mapping[str, DataType], *, source: str | None) -> None:
        self._raw: Any = raw
        self._types = types
        self._source = source
        self._decoded: dict[str, _V] | None = None
        # The parsed object, and the entries decoded from it so far (names looked up).
        self._entries: dict[str, Any] | None = None
        self._some: dict[str, _V] = {}

    def _decode_one(self, name: str, raw: Any) -> _V:
        raise NotImplementedError

    def _parsed(self) -> dict[str, Any]:
        entries = self._entries
        if entries is None:
            raw = self._raw
            if callable(raw):
                raw = self._raw = raw()
            parsed = json.loads(raw) if isinstance(raw, str) else raw
            if not isinstance(parsed, dict):
                raise TypeError(f"expected a JSON object, found {type(parsed).__name__}")
            entries = self._entries = parsed
        return entries

    def _items(self) -> dict[str, _V]:
        decoded = self._decoded
        if decoded is None:
            try:
                entries = self._parsed()
                decoded = {
                    str(k): self._some[k] if k in self._some else self._decode_one(k, v)
                    for k, v in entries.items()
                }
            except (CorruptManifestError, *_DECODE_ERRORS) as e:
                raise _corrupt(self._what, self._source, e) from e
            self._decoded, self._raw, self._entries, self._some = decoded, None, None, {}
        return decoded

    def _type_of(self, name: str) -> DataType:
        found = self._types.get(name)
        if found is None:
            return DataType.STRING
        return found

    def __getitem__(self, key: str) -> _V:
        decoded = self._decoded
        if decoded is not None:
            return decoded[key]
        found = self._some.get(key)
        if found is not None:
            return found
        try:
            entries = self._parsed()
            if key not in entries:
                raise KeyError(key)
            found = self._some[key] = self._decode_one(key, entries[key])
        except KeyError:
            raise
        except (CorruptManifestError, *_DECODE_ERRORS) as e:
            raise _corrupt(self._what, self._source, e) from e
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())

    def __repr__(self) -> str:
        return repr(self._items())

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (self._items(),))


class FieldStatsMap(_LazyMap["FieldStats"]):
    """A part's FIELD statistics (name -> :class:`FieldStats`), decoded on first use from
    ``PartFile.to_json()["fields"]``: its JSON text, or a function fetching it (a Parquet
    checkpoint reads its column only when a plan or an aggregate first needs a FIELD), or
    that object already parsed (a commit file's)."""

    __slots__ = ()
    _what = "a part's FIELD statistics"

    @property
    def raw_json(self) -> str | None:
        """The undecoded JSON text (encoders reuse it), None once decoded."""
        raw = self._raw
        if callable(raw):
            raw = self._raw = raw()
        return raw if isinstance(raw, str) else None

    def _decode_one(self, name: str, raw: Any) -> FieldStats:
        return FieldStats.from_json(raw, self._type_of(name))


class TagStatsMap(_LazyMap["TagStats"]):
    """A part's TAG statistics (name -> :class:`TagStats`), decoded on first use from the
    parsed ``PartFile.to_json()["tags"]`` object of a commit file.

    Decoding them for every part a cold load replays cost a third of building the parts
    after the checkpoint, although a plan reads the TAG statistics of the parts it keeps.
    """

    __slots__ = ()
    _what = "a part's TAG statistics"

    def _decode_one(self, name: str, raw: Any) -> TagStats:
        return TagStats.from_json(raw)


class SeriesStatsMap(_LazyMap["SeriesStats"]):
    """One device's per-FIELD statistics (name -> :class:`SeriesStats`), decoded on first use
    from the parsed JSON object of its part's ``device_fields`` entry.

    Decoding them all cost most of a cold plan (5 FIELDs x 100 devices x 20 parts: 0.6 s)
    although planning reads only a device's TAGs, time range and row count.
    """

    __slots__ = ()
    _what = "a device's FIELD statistics"

    def _decode_one(self, name: str, raw: Any) -> SeriesStats:
        return SeriesStats.from_json(raw, self._type_of(name))


def devices_from_json(
    devices: list[Any] | None,
    device_fields: list[Any] | None,
    field_types: Mapping[str, DataType],
    *,
    source: str | None = None,
) -> tuple[DeviceStats, ...] | None:
    if devices is None:
        return None
    out = tuple(DeviceStats.from_json(d) for d in devices)
    if device_fields is None:
        return out
    if len(device_fields) != len(out):
        raise CorruptManifestError(
            f"a part lists {len(out)} devices but {len(device_fields)} device_fields entries"
        )
    # Each device's statistics decode when first read (aggregates); planning never reads them.
    return tuple(
        device
        if fields is None
        else DeviceStats(
            device.tags,
            device.row_count,
            device.min_time,
            device.max_time,
            SeriesStatsMap(json_object(fields), field_types, source=source),
        )
        for device, fields in zip(out, device_fields, strict=True)
    )


def json_object(value: Any) -> dict[str, Any]:
    """``value`` if it is a parsed JSON object; a TypeError (a decode error) otherwise."""
    if not isinstance(value, dict):
        raise TypeError(f"expected a JSON object, found {type(value).__name__}")
    return value
