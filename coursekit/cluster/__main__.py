"""`python -m coursekit.cluster`: make grade (its options and lines: coursekit.cluster.cli)."""

import sys

from coursekit.cluster.cli import main

if __name__ == "__main__":
    sys.exit(main())
