"""Which adapter reads a part: TsFile for the table's own parts, Parquet/ORC/CSV for
external ones. A part of a format this release does not know fails here, clearly."""

from __future__ import annotations

from collections.abc import Mapping

from tsfile_catalog.exceptions import CorruptManifestError
from tsfile_catalog.formats.csv import CSV
from tsfile_catalog.formats.external import ExternalFormat
from tsfile_catalog.formats.orc import ORC
from tsfile_catalog.formats.parquet import PARQUET

__all__ = ["EXTERNAL", "external_format"]

EXTERNAL: Mapping[str, ExternalFormat] = {f.name: f for f in (PARQUET, ORC, CSV)}


def external_format(name: str, *, part: str) -> ExternalFormat:
    """The adapter for external parts of format ``name``.

    Raises:
        CorruptManifestError: naming the part and the format, when this release cannot read it.
    """
    adapter = EXTERNAL.get(name)
    if adapter is None:
        raise CorruptManifestError(
            f"part {part} has format {name!r}, which this tsfile-catalog cannot read (it reads "
            f"tsfile, {', '.join(EXTERNAL)}): upgrade tsfile-catalog"
        )
    return adapter
