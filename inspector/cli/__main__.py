"""`python -m inspector.cli`: the same as `network-inspector`."""

import sys

from .commands import main

sys.exit(main())
