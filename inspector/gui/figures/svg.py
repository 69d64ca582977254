"""SVG that reads the same outside Qt. QSvgGenerator writes a cosmetic pen (pyqtgraph's curves, axes and
grids) as a stroke in data coordinates under the group's scaling `transform`, with `vector-effect=
"non-scaling-stroke"` to keep it thin; librsvg, ImageMagick and CairoSVG ignore that attribute and draw a
2-pixel pen scaled by the plot's 300 x -180 matrix: a huge filled band. `plain_strokes` moves such strokes
into pixel coordinates (the group's matrix applied to their points), so every renderer draws them as
drawn on screen. `in_pixels` gives the picture its size in px (Qt writes mm at its resolution) and a
generic font family after Qt's."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
MATRIX = re.compile(r"matrix\(([^)]*)\)")


def _matrix(group: ET.Element) -> tuple[float, ...] | None:
    found = MATRIX.fullmatch(group.get("transform", "").strip())
    if not found:
        return None
    values = tuple(float(v) for v in NUMBER.findall(found.group(1)))
    return values if len(values) == 6 else None


def _mapped(text: str, m: tuple[float, ...]) -> str:
    """Every x,y pair of `text` (a polyline's points, or a path of absolute M/L/C/Q/Z commands as Qt writes
    them) under the matrix `m` = (a, b, c, d, e, f)."""
    a, b, c, d, e, f = m
    out, pending = [], []
    for token in re.findall(NUMBER.pattern + "|[A-Za-z]", text):
        if token.isalpha():
            if token not in "MLCQZ":
                raise ValueError(f"a path command {token!r}: only absolute M, L, C, Q and Z are moved")
            out.append(token)
            continue
        pending.append(float(token))
        if len(pending) == 2:
            (x, y), pending = pending, []
            out.append(f"{a * x + c * y + e:.6g},{b * x + d * y + f:.6g}")
    return " ".join(out)


def _scaled(m: tuple[float, ...]) -> bool:
    """More than a shift: the matrix scales, flips or turns (and with it a stroke's width)."""
    a, b, c, d, _e, _f = m
    return max(abs(a - 1), abs(b), abs(c), abs(d - 1)) > 1e-9


def plain_strokes(svg: bytes) -> bytes:
    """`svg` with each non-scaling stroke under a scaling matrix drawn in pixel coordinates instead; what
    else shares its group keeps the matrix in a group of its own, in the same order."""
    ET.register_namespace("", SVG)
    ET.register_namespace("xlink", XLINK)
    root = ET.fromstring(svg)
    changed = False
    for group in list(root.iter(f"{{{SVG}}}g")):  # a list: groups are added on the way
        m = _matrix(group)
        if m is None or not _scaled(m):
            continue
        kids = list(group)
        if not any(k.get("vector-effect") == "non-scaling-stroke" for k in kids):
            continue
        try:
            moved = {id(k): _mapped(k.get("points", k.get("d", "")), m) for k in kids
                     if k.get("vector-effect") == "non-scaling-stroke"
                     and k.tag.rsplit("}", 1)[-1] in ("polyline", "polygon", "path")}
        except ValueError:
            continue
        transform = group.attrib.pop("transform")
        for kid in kids:
            group.remove(kid)
        run: ET.Element | None = None
        for kid in kids:
            if id(kid) in moved:
                kid.set("points" if "points" in kid.attrib else "d", moved[id(kid)])
                kid.attrib.pop("vector-effect")
                group.append(kid)
                run = None
            else:
                if run is None:
                    run = ET.SubElement(group, f"{{{SVG}}}g", {"transform": transform})
                run.append(kid)
        changed = True
    if not changed:
        return svg
    return b'<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' + ET.tostring(root, encoding="utf-8",
                                                                                       xml_declaration=False)


def in_pixels(svg: bytes) -> bytes:
    """`svg` sized in px as its viewBox (Qt writes mm at its resolution), each font family followed by
    `sans-serif` for a renderer without Qt's family."""
    text = svg.decode("utf-8")
    box = re.search(r'<svg[^>]*?\bviewBox="\s*([^"]*)"', text)
    if box:
        _x, _y, width, height = (float(v) for v in NUMBER.findall(box.group(1)))
        text = re.sub(r'(<svg[^>]*?)\bwidth="[^"]*"', rf'\1width="{width:g}px"', text, count=1)
        text = re.sub(r'(<svg[^>]*?)\bheight="[^"]*"', rf'\1height="{height:g}px"', text, count=1)
    text = re.sub(r'font-family="([^",]*)"', r'font-family="\1, sans-serif"', text)
    return text.encode("utf-8")
