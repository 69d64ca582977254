"""The documentation's screenshots, taken by the app itself:
`uv run python -m inspector.docs.screens OUT_DIR [--size 1280x800] [--only NAME ...]`.

Opens the app offscreen (on a screen of `--size`) on the demo models, one fresh window per picture with its
settings in a temporary folder (the user's are untouched), does what the picture shows (a layer, an edit, an
attribution, a box, a ViT's attention, a second checkpoint, a folder, an atlas, the graph, concepts) and saves
the window as OUT_DIR/NAME.png, 256 colours. Everything is made offline in that temporary folder: the demo's
shapes, a perturbed copy of its weights, an atlas, a concept dictionary; the ViT has random weights.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from .screens_shots import SHOTS

SIZE = re.compile(r"^(\d{3,4})x(\d{3,4})$")
SMALLEST, LARGEST = (800, 600), (3840, 2400)


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The arguments, or exit 2 with one line (before Qt or torch is imported)."""
    parser = argparse.ArgumentParser(prog="python -m inspector.docs.screens",
                                     description="Take the documentation's screenshots.")
    parser.add_argument("out", metavar="OUT_DIR", help="the folder the PNGs go to (docs/images)")
    parser.add_argument("--size", default="1280x800", help="the window's size, WxH (default 1280x800)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help=f"take only these: {', '.join(SHOTS)}")
    args = parser.parse_args(argv)
    found = SIZE.match(args.size)
    size = (int(found.group(1)), int(found.group(2))) if found else None
    if size is None or not all(lo <= v <= hi for lo, v, hi in zip(SMALLEST, size, LARGEST)):
        parser.error(f"--size {args.size}: give WIDTHxHEIGHT from {SMALLEST[0]}x{SMALLEST[1]} to "
                     f"{LARGEST[0]}x{LARGEST[1]}, e.g. 1280x800")
    unknown = [n for n in args.only or () if n not in SHOTS]
    if unknown:
        parser.error(f"--only {' '.join(unknown)}: not a screenshot; they are {', '.join(SHOTS)}")
    if Path(args.out).exists() and not Path(args.out).is_dir():
        parser.error(f"{args.out} is a file, not a folder")
    args.size = size
    args.only = list(dict.fromkeys(args.only)) if args.only else list(SHOTS)
    return args


def use_offscreen_screen(size: tuple[int, int], folder: Path) -> None:
    """Qt's offscreen platform with one screen of `size` (its own is 800x800), unless a display is set."""
    if os.environ.get("DISPLAY") or os.environ.get("QT_QPA_PLATFORM", "offscreen") != "offscreen":
        return
    config = folder / "screen.json"
    config.write_text(json.dumps({"screens": [{"name": "docs", "x": 0, "y": 0, "width": size[0], "height": size[1],
                                               "logicalDpi": 96, "dpr": 1}]}))
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={config}"


def take(names: list[str], size: tuple[int, int], tmp: Path, out: Path) -> list[str]:
    """Take the pictures `names` into `out`, the files they need in `tmp`; the names of those that failed."""
    use_offscreen_screen(size, tmp)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from PySide6.QtWidgets import QApplication

    from inspector.gui.common.qt_messages import quiet_qt

    from .screens_app import Shooter

    quiet_qt()
    app = QApplication.instance() or QApplication([])
    shooter = Shooter(app, size, tmp, out)
    failed = []
    for name in names:
        start = time.perf_counter()
        try:
            SHOTS[name](shooter, name)
            print(f"wrote {out / (name + '.png')} ({time.perf_counter() - start:.1f} s)")
        except Exception as exc:  # one picture that fails does not stop the others
            failed.append(name)
            print(f"{name}: failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        finally:
            shooter.close_all()
    return failed


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    here = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="inspector-screens-") as tmp:
        os.chdir(tmp)  # the files the pictures need are named relative to it
        try:
            failed = take(args.only, args.size, Path(tmp), out)
        finally:
            os.chdir(here)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
