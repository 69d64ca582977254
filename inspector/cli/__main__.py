"""`python -m inspector.cli`: the same as `network-inspector`."""

import sys

from .dispatch import main

if __name__ == "__main__":
    sys.exit(main())
