"""What a node and a frame say, and how large that is drawn: the layout sizes every box from its text, and the
view writes the same text, so one function each for both.

Text width is estimated, not measured (the layout runs in a worker without Qt): `CHAR_WIDTH` pixels a character
at the view's 11 px font is a little over its average glyph, so a label fits its box; the view elides what does
not.
"""

from __future__ import annotations

from ..record.nodes import Group, Node

FONT_PX = 11  # the view's font, pixels at zoom 1
CHAR_WIDTH = 7.0  # pixels a character at FONT_PX (a bold glyph's average is about 6.5)
LINE_HEIGHT = 14.0
PAD = 5.0  # around the text, and between the tick box, the text and the toggle
TICK = 12.0  # the tick box (a module's) and the +/- toggle (a group's)
MIN_WIDTH = 48.0
TITLE_HEIGHT = 24.0  # an open group's title band, at the top inside its frame
FRAME_PAD = 12.0  # between a frame and what it holds


def node_label(node: Node) -> tuple[str, str]:
    """What a node's box says: its op or type (`Conv2d`, `add_` for an in-place add), and its path with the call
    (`layer1.0.relu #1`) for a module or a closed group (a method's group: its id, `transform.postprocess(...)`), ''
    otherwise."""
    op = node.op + ("_" if node.inplace and not node.op.endswith("_") else "")
    where = node.path if node.kind in ("module", "group") else ""
    if node.call and where:
        where += f" #{node.call}"
    if node.kind == "group" and "(" in node.id:  # a method's group: `transform.postprocess(...)`
        where = node.id
    return op, where


def frame_title(group: Group) -> str:
    """What an open group's frame says in its title band: `layer1.0  (BasicBlock)`."""
    name = group.path + (f".{group.method}(...)" if group.method else "") + (f" #{group.call}" if group.call else "")
    return f"{name}  ({group.type_name})" if name else group.type_name


def text_width(text: str) -> float:
    return len(text) * CHAR_WIDTH


def box_size(node: Node) -> tuple[float, float]:
    """(width, height) of a node's box: its label's lines, the tick box of a module or group, a group's toggle."""
    op, where = node_label(node)
    width = max(text_width(op), text_width(where)) + 2 * PAD
    if node.kind in ("module", "group"):
        width += TICK + PAD  # the tree's tick box
    if node.kind == "group":
        width += TICK + PAD  # the +/- toggle
    lines = 2 if where else 1
    return float(max(MIN_WIDTH, round(width))), lines * LINE_HEIGHT + 2 * PAD + (2 if lines == 2 else 0)


def frame_size(group: Group, inside: tuple[float, float]) -> tuple[float, float]:
    """(width, height) of an open group's frame around an inside of size `inside`: the title band and padding."""
    width = max(inside[0] + 2 * FRAME_PAD, text_width(frame_title(group)) + 3 * PAD + TICK)
    return float(round(width)), TITLE_HEIGHT + inside[1] + FRAME_PAD * 2
