"""File formats below the Spark layer: one module per format, each read and written through
the adapter protocol in :mod:`tsfile_catalog.formats.base`."""
