"""How large a graph's picture may be: read by the drawing (`png`) and by the command's help, which must not
import the drawing to say them."""

DEFAULT_SCALE = 2.0
SHORT_SIDE = 256  # as inspector.core.engine.export.SHORT_SIDE: a picture is at least this many pixels on its short side
LONG_SIDE = 32768  # and at most this many on its long side: twice export.LONG_SIDE, a graph is long and thin
MOST_PIXELS = 40_000_000  # and at most this many in all (120 MB of RGB)
