"""CSV files as external parts: types inferred with the table's types as targets, one full
read at ADD time for the statistics (CSV has no footer), and a full read per scan, filtered
exactly afterwards.

Options (recorded per part): ``header`` ('true': the first line names the columns; 'false':
the columns are the time column, then the table's columns in table order as they were at ADD
PART, which the part records as ``csvColumns`` so that later moves and renames never shift
them), ``delimiter``, ``quote`` and ``nullValue`` (the text read as null; default the empty
field).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.dataset as ds

from tsfile_catalog.formats.base import NORMALIZED_ARROW
from tsfile_catalog.formats.external import ExternalFormat
from tsfile_catalog.io import FileIO
from tsfile_catalog.metadata.schema import TIME_COLUMN, DataType, TableSchema

__all__ = ["CsvFormat", "CSV", "CSV_COLUMNS_OPTION"]

# The read option a header-less CSV part records its columns' names under (a JSON list): the
# names the table's columns had, in table order, when the part was added.
CSV_COLUMNS_OPTION = "csvColumns"

# The Arrow type a CSV column is parsed as when the table has a column of that name; TAGs
# are always strings, so "01" stays "01". TIMESTAMP is left to inference (ISO text or raw
# numbers both work).
_TARGET: Mapping[DataType, pa.DataType] = {
    t: arrow for t, arrow in NORMALIZED_ARROW.items() if t is not DataType.TIMESTAMP
}


class CsvFormat(ExternalFormat):
    name = "csv"
    extensions = (".csv",)

    def _options(
        self, io: FileIO, url: str, options: Mapping[str, str], schema: TableSchema
    ) -> tuple[pacsv.ReadOptions, pacsv.ParseOptions, pacsv.ConvertOptions]:
        header = options.get("header", "true") == "true"
        time_column = options.get("timeColumn", TIME_COLUMN)
        if header:
            read = pacsv.ReadOptions()
            names = self._header(io, url, options, autogenerate=False)
        elif CSV_COLUMNS_OPTION in options:
            names = [str(n) for n in json.loads(options[CSV_COLUMNS_OPTION])]
            read = pacsv.ReadOptions(column_names=names)
        else:
            # ADD PART (or a part added before csvColumns was recorded): the time column,
            # then the table's columns in table order, as many as the file has.
            width = len(self._header(io, url, options, autogenerate=True))
            names = [time_column, *schema.names[1:width]]
            read = pacsv.ReadOptions(column_names=names)
        parse = pacsv.ParseOptions(
            delimiter=options.get("delimiter", ","), quote_char=options.get("quote", '"')
        )
        types: dict[str, pa.DataType] = {}
        for name in names:
            col = schema.column(name.lower())
            if col is not None and col.type in _TARGET and name.lower() != time_column:
                types[name] = _TARGET[col.type]
        null_value = options.get("nullValue", "")
        convert = pacsv.ConvertOptions(
            column_types=types, null_values=[null_value], strings_can_be_null=True
        )
        return read, parse, convert

    def _header(
        self, io: FileIO, url: str, options: Mapping[str, str], *, autogenerate: bool
    ) -> list[str]:
        """The first line's fields: the column names, or (``autogenerate``) placeholders
        that count the columns of a header-less file."""
        parse = pacsv.ParseOptions(
            delimiter=options.get("delimiter", ","), quote_char=options.get("quote", '"')
        )
        with io.open_input(url) as handle:
            first = pacsv.open_csv(
                handle,
                read_options=pacsv.ReadOptions(
                    block_size=1 << 16, autogenerate_column_names=autogenerate
                ),
                parse_options=parse,
                convert_options=pacsv.ConvertOptions(
                    column_types={}, include_columns=None, strings_can_be_null=True
                ),
            )
            return list(first.schema.names)

    def _read_all(
        self, io: FileIO, url: str, options: Mapping[str, str], schema: TableSchema
    ) -> pa.Table:
        read, parse, convert = self._options(io, url, options, schema)
        with io.open_input(url) as handle:
            return pacsv.read_csv(
                handle, read_options=read, parse_options=parse, convert_options=convert
            )

    def recorded_options(self, arrow: pa.Schema, options: Mapping[str, str]) -> dict[str, str]:
        """A header-less file's column names as ADD PART gave them: a later move or rename
        of the table's columns must not shift which column a value is read as."""
        if options.get("header", "true") == "true":
            return {}
        return {CSV_COLUMNS_OPTION: json.dumps(list(arrow.names))}

    def arrow_schema(
        self, io: FileIO, url: str, options: Mapping[str, str], schema: TableSchema
    ) -> pa.Schema:
        read, parse, convert = self._options(io, url, options, schema)
        with io.open_input(url) as handle:
            reader = pacsv.open_csv(
                handle, read_options=read, parse_options=parse, convert_options=convert
            )
            return reader.schema

    def read(
        self,
        io: FileIO,
        url: str,
        columns: Sequence[str],
        options: Mapping[str, str],
        schema: TableSchema,
        filter: ds.Expression | None = None,
    ) -> pa.Table:
        # No statistics to prune by: read the file and let the caller filter exactly.
        return self._read_all(io, url, options, schema).select(list(columns))


CSV = CsvFormat()
