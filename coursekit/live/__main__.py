"""`python -m coursekit.live`: make live (its options and lines: coursekit.live.cli)."""

import sys

from coursekit.live.cli import main

if __name__ == "__main__":
    sys.exit(main())
