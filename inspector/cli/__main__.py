"""`python -m inspector.cli`: the same as `network-inspector`."""

import sys

from .dispatch import main

sys.exit(main())
