"""ORC files as external parts: the schema from the footer, reads through ``pyarrow.dataset``
(pushed filters prune stripes). pyarrow exposes no ORC column statistics, so FIELD
statistics come from one columnar read at ADD time."""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
import pyarrow.orc as orc

from tsfile_catalog.formats.external import FOOTER_TAIL_BYTES, ExternalFormat
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.schema import TableSchema

__all__ = ["OrcFormat", "ORC"]


class OrcFormat(ExternalFormat):
    name = "orc"
    digest_tail = FOOTER_TAIL_BYTES  # the footer describes every row
    extensions = (".orc",)

    def arrow_schema(
        self, io: FileIO, url: str, options: Mapping[str, str], schema: TableSchema
    ) -> pa.Schema:
        with io.open_input(url) as handle:
            return orc.ORCFile(handle).schema

    def footer(
        self, io: FileIO, url: str, options: Mapping[str, str], schema: TableSchema
    ) -> tuple[pa.Schema, int | None]:
        with io.open_input(url) as handle:
            file = orc.ORCFile(handle)
            return file.schema, file.nrows


ORC = OrcFormat()
