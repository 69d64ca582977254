"""What the documentation site is made from that the code itself can make: the CLI reference (`cli_reference`,
from the parser, so it cannot drift from `--help`), the models page's method-by-family table (`support_table`,
from core.records.support, whose every cell a test runs) and the screenshots (`screens`, the app taken offscreen).

Not part of the app: nothing in `inspector` imports this package, and the bundle does not need it.
"""
