"""``python -m tsfile_catalog``: the ``tsfile-catalog`` command line."""

from tsfile_catalog.cli.main import main

if __name__ == "__main__":
    main()
