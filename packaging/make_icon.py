"""Draw the app icon: ``uv run python packaging/make_icon.py``.

A stylised layered network (3-4-2 nodes, every edge drawn) on a rounded dark-blue tile,
one hidden node highlighted as "inspected" with a magnifier ring. Writes
``resources/icons/network-inspector.png`` (256 px, the window icon and the source for
macOS) and ``resources/icons/network-inspector.ico`` (16-256 px, Windows). Both are
committed; rerun this only to change the design.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parents[1]
ICONS = ROOT / "resources" / "icons"
ICO_SIZES = [(16, 16), (24, 24), (32, 32), (48, 48), (64, 64), (128, 128), (256, 256)]


def draw(size: int = 256, scale: int = 4) -> Image.Image:
    """The icon at ``size`` pixels, drawn at ``scale`` times that and reduced (anti-aliasing)."""
    s = size * scale
    img = Image.new("RGBA", (s, s), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)

    def p(v: float) -> int:
        return round(v * s)

    d.rounded_rectangle([p(0.03), p(0.03), p(0.97), p(0.97)], radius=p(0.18),
                        fill=(22, 43, 72, 255), outline=(76, 120, 168, 255), width=p(0.02))
    layers = [[0.28, 0.5, 0.72], [0.2, 0.4, 0.6, 0.8], [0.36, 0.64]]
    xs = [0.2, 0.5, 0.8]
    nodes = [[(x, y) for y in ys] for x, ys in zip(xs, layers)]
    for a, b in zip(nodes, nodes[1:]):
        for (x0, y0) in a:
            for (x1, y1) in b:
                d.line([p(x0), p(y0), p(x1), p(y1)], fill=(140, 170, 205, 200), width=p(0.012))
    inspected = nodes[1][1]
    for layer in nodes:
        for (x, y) in layer:
            r = 0.055
            colour = (255, 190, 60, 255) if (x, y) == inspected else (235, 242, 250, 255)
            d.ellipse([p(x - r), p(y - r), p(x + r), p(y + r)], fill=colour,
                      outline=(22, 43, 72, 255), width=p(0.01))
    x, y = inspected
    r = 0.11
    d.ellipse([p(x - r), p(y - r), p(x + r), p(y + r)], outline=(255, 190, 60, 255), width=p(0.022))
    d.line([p(x + 0.078), p(y + 0.078), p(x + 0.17), p(y + 0.17)], fill=(255, 190, 60, 255), width=p(0.04))
    return img.resize((size, size), Image.LANCZOS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ICONS)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    icon = draw(256)
    png, ico = args.out / "network-inspector.png", args.out / "network-inspector.ico"
    icon.save(png, optimize=True)
    icon.save(ico, sizes=ICO_SIZES)
    print(png)
    print(ico)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
