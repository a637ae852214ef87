"""Command-line arguments as library values: the table a command names, ``--option`` pairs,
durations. No Spark; the catalog registry (the SQL package) is imported only when a command
names a table through ``--warehouse``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast, get_args

from tsfile_catalog.exceptions import OptionError, TableNotFoundError
from tsfile_catalog.metadata.expressions import TimestampAs, TimeUnit
from tsfile_catalog.storage_options import (
    STORAGE_PREFIX,
    is_credential_option,
    storage_options_from,
)
from tsfile_catalog.table import Table, open_table

__all__ = [
    "Target",
    "parse_duration",
    "parse_options",
    "parse_size",
    "resolve",
    "split_part_options",
]

# The read options that change what a --where means (how `time` and TIMESTAMP columns are
# typed); a catalog table stores them, a table named by its path takes them from --option.
_READ_OPTIONS = {"timestampas": "timestampAs", "timestampprecision": "timestampPrecision"}
_CHOICES = {"timestampAs": get_args(TimestampAs), "timestampPrecision": get_args(TimeUnit)}


def parse_options(pairs: Sequence[str]) -> dict[str, str]:
    """``KEY=VALUE`` pairs: ``fs.*`` storage settings, ``timestampAs``, ``timestampPrecision``.

    Raises:
        OptionError: a pair without ``=``, an unknown key or value, or a credential (those
            come from the environment, never from a command line that ``ps`` and shell
            histories show).
    """
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise OptionError(f"--option {pair!r} is not KEY=VALUE")
        if key.lower().startswith(STORAGE_PREFIX) and len(key) > len(STORAGE_PREFIX):
            if is_credential_option(key, value):
                raise OptionError(
                    f"--option {key} looks like a credential; credentials never go on the "
                    "command line: set them in the environment (AWS_ACCESS_KEY_ID / "
                    "AWS_SECRET_ACCESS_KEY, fsspec's FSSPEC_<PROTOCOL>_<NAME> variables or "
                    "config files)"
                )
            out[STORAGE_PREFIX + key[len(STORAGE_PREFIX) :]] = value
        elif key.lower() in _READ_OPTIONS:
            name = _READ_OPTIONS[key.lower()]
            if value.strip().lower() not in _CHOICES[name]:
                raise OptionError(
                    f"--option {name}={value!r}: expected one of {', '.join(_CHOICES[name])}"
                )
            out[name] = value.strip().lower()
        else:
            raise OptionError(
                f"unknown --option {key!r}: use fs.<name> for storage settings "
                "(fs.endpoint_url=...), timestampAs or timestampPrecision"
            )
    return out


_DURATION = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([a-z]*)\s*", re.IGNORECASE)
_UNIT_MS = {
    "": 3_600_000,  # a bare number is hours, as in Delta's VACUUM ... RETAIN n HOURS
    "ms": 1,
    "s": 1_000,
    "m": 60_000,
    "min": 60_000,
    "h": 3_600_000,
    "hours": 3_600_000,
    "d": 86_400_000,
    "days": 86_400_000,
}


def parse_duration(text: str) -> int:
    """``168h``, ``7d``, ``30m``, ``90s``, ``0`` (a bare number is hours) in milliseconds.

    Raises:
        OptionError: anything else, naming the text.
    """
    match = _DURATION.fullmatch(text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _UNIT_MS:
        raise OptionError(
            f"--retain {text!r} is not a duration: use a number with h, d, m, s or ms "
            "(168h, 7d); a bare number is hours"
        )
    return round(float(match.group(1)) * _UNIT_MS[unit])


_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([a-z]*)\s*", re.IGNORECASE)
_UNIT_BYTES = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kb": 1024,
    "kib": 1024,
    "m": 1024**2,
    "mb": 1024**2,
    "mib": 1024**2,
    "g": 1024**3,
    "gb": 1024**3,
    "gib": 1024**3,
}


def parse_size(text: str, *, option: str) -> int:
    """``134217728``, ``128MB``, ``64m``, ``1GiB`` in bytes (binary units: a table's
    ``targetFileSize`` counts 128 MiB as 128MB).

    Raises:
        OptionError: anything else, or a size below one byte, naming ``option``.
    """
    match = _SIZE.fullmatch(text)
    unit = match.group(2).lower() if match else ""
    size = round(float(match.group(1)) * _UNIT_BYTES[unit]) if match and unit in _UNIT_BYTES else 0
    if size < 1:
        raise OptionError(
            f"{option} {text!r} is not a size: use a positive number of bytes, or with KB, MB "
            "or GB (128MB)"
        )
    return size


def split_part_options(pairs: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """``add-part``'s ``KEY=VALUE`` pairs: the ``fs.*`` storage settings (for
    :func:`resolve`) and the ``ADD PART`` options (``partition``, ``timeColumn``,
    ``timestampPrecision``, ``mergeSchema``, CSV options), which the table layer checks.

    Raises:
        OptionError: a pair without ``=``.
    """
    storage: list[str] = []
    part: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise OptionError(f"--option {pair!r} is not KEY=VALUE")
        if key.lower().startswith(STORAGE_PREFIX):
            storage.append(pair)
        elif key.lower() in {k.lower() for k in part}:
            raise OptionError(f"--option {key} is given twice")
        else:
            part[key] = value
    return storage, part


@dataclass(frozen=True)
class Target:
    """The table a command works on.

    Attributes:
        name: how results name it (the catalog name, or the location).
        location: the table root URL.
        options: its read options (``timestampAs``, ``timestampPrecision``, ``fs.*``).
        storage: fsspec storage options for it.
    """

    name: str
    location: str
    options: Mapping[str, str]
    storage: Mapping[str, Any]

    @property
    def timestamp_as(self) -> TimestampAs:
        return cast(TimestampAs, self.options.get("timestampAs", "long").strip().lower())

    @property
    def unit(self) -> TimeUnit:
        return cast(TimeUnit, self.options.get("timestampPrecision", "ms").strip().lower())

    def of_table(self, table: Table) -> Target:
        """This target reading ``table``'s time as the table records it: its unit (an
        ``--option timestampPrecision`` naming another is refused) and, unless an option
        says, how its ``time`` reads.

        Raises:
            OptionError: the option contradicts the table's unit.
        """
        given = self.options.get("timestampPrecision")
        unit = table.time_unit(None if given is None else cast(TimeUnit, given.strip().lower()))
        options = {**self.options, "timestampPrecision": unit}
        if table.time is not None:
            options.setdefault("timestampAs", table.time.timestamp_as)
        return replace(self, options=options)

    def open(
        self,
        *,
        version: int | None = None,
        timestamp: str | None = None,
        time_zone: str | None = None,
    ) -> Table:
        """The table at its latest version, or an older one.

        Raises:
            TableNotFoundError: nothing there (naming the catalog name when there is one).
        """
        try:
            return open_table(
                self.location,
                version=version,
                timestamp=timestamp,
                time_zone=time_zone,
                storage_options=self.storage,
            )
        except TableNotFoundError as e:
            if self.name == self.location:
                raise
            raise TableNotFoundError(
                f"table {self.name!r} is registered at {self.location}, but no table is there "
                f"any more ({e})"
            ) from e


def resolve(table: str, *, warehouse: str | None, options: Sequence[str] = ()) -> Target:
    """The table a command names: a path or URL, or with ``warehouse`` a catalog name
    (``name`` or ``database.name``) looked up in the warehouse's registry.

    A catalog table's own options (its ``timestampAs``, its ``fs.*`` settings) win over
    ``--option``, as they do over a ``Catalog``'s storage options.

    Raises:
        OptionError: a bad ``--option``.
        TableNotFoundError: the name is not in the catalog.
        SqlError: the name is not an identifier.
    """
    given = parse_options(options)
    if warehouse is None:
        return Target(table, table, given, storage_options_from(given))
    # The registry lives in the SQL package, whose import only catalog names pay for.
    from tsfile_catalog.sql.registry import Registry, parse_table_name

    registry = Registry(warehouse, storage_options_from(given))
    entry = registry.require(parse_table_name(table))
    merged = {**given, **entry.options}
    return Target(entry.display_name, entry.location, merged, storage_options_from(merged))
