"""`python -m inspector.cli`: the same as `network-inspector`."""

import sys

from .main import main

sys.exit(main())
