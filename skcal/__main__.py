"""Run the ``skcal`` command line as ``python -m skcal``."""

import sys

from skcal.cli import main

if __name__ == "__main__":
    sys.exit(main())
