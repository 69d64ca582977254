"""`python -m inspector.selftest`: the same as `network-inspector --self-test`."""

import sys

from inspector.selftest import main

sys.exit(main())
