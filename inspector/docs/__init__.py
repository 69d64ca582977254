"""What the documentation site is made from that the code itself can make: the CLI reference (`cli_reference`,
from the parser, so it cannot drift from `--help`) and the screenshots (`screens`, the app taken offscreen).

Not part of the app: nothing in `inspector` imports this package, and the bundle does not need it.
"""
