"""`python -m inspector`: the app (or a headless command when given one)."""

import sys

from inspector.cli import main

if __name__ == "__main__":
    sys.exit(main())
