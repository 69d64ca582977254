"""Pictures of the Concepts dock: `python -m inspector.gui.concepts_screenshot OUT_DIR [--size WxH] [--concepts DIR]
[--layer relu3] [--k 16] [--images 64]`.

Learns concepts of the demo's `--layer` over `--images` generated shapes (unless `--concepts` names a folder that
`network-inspector concepts` wrote), opens the app on the demo with sample:star, opens them in the Concepts dock,
picks the image's strongest concept and saves OUT_DIR/WxH-concepts.png (the window), WxH-concept-page.png (its
page) and WxH-concept-ablated.png (its ablation in the Compare tab). Settings go to a temporary folder; runs
offscreen unless a display is set (e.g. under `xvfb-run`).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path


def learn(folder: Path, layer: str, k: int, images: int) -> Path:
    import numpy as np

    from inspector.core import load_model
    from inspector.core.concepts import learn_concepts
    from inspector.demo.shapes import CLASSES, render

    data = folder / "shapes"
    data.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for i in range(images):
        name = CLASSES[i % len(CLASSES)]
        (data / name).mkdir(exist_ok=True)
        render(i % len(CLASSES), rng).save(data / name / f"{i:03d}.png")
    learn_concepts(load_model("demo"), data, layer, folder / "concepts", k=k, top=6)
    return folder / "concepts"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m inspector.gui.concepts_screenshot")
    parser.add_argument("out")
    parser.add_argument("--size", default="1280x800")
    parser.add_argument("--concepts", help="a concepts folder of the demo (else learned here)")
    parser.add_argument("--layer", default="relu3")
    parser.add_argument("--k", type=int, default=16)
    parser.add_argument("--images", type=int, default=64)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    width, height = (int(v) for v in args.size.lower().split("x"))
    folder = Path(args.concepts) if args.concepts else learn(Path(tempfile.mkdtemp()), args.layer, args.k, args.images)
    if not os.environ.get("DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from .main_window import MainWindow
    from .qt_messages import quiet_qt
    from .screenshot import pump

    quiet_qt()
    app = QApplication.instance() or QApplication([])
    settings = QSettings(str(Path(tempfile.mkdtemp()) / "screenshot.ini"), QSettings.IniFormat)
    settings.setValue("model/source", "demo")
    settings.setValue("input", "sample:star")
    settings.setValue("ticks/demo", f'["conv3", "{args.layer}", "fc"]')
    window = MainWindow(settings=settings, ask_trust=lambda _name, _what: False)
    window.resize(width, height)
    window.show()
    view = window.concepts.view
    written = []

    def grab(widget, name: str) -> None:
        path = out / f"{width}x{height}-{name}.png"
        widget.grab().save(str(path))
        written.append(path)
        print(f"wrote {path}")

    def first(_outcome) -> None:
        window.sigResultShown.disconnect(first)
        window.state.select_layer(args.layer)
        window.concepts.open(str(folder))
        for _ in range(600):
            pump(app, 0.1)
            if view.reading is not None and view.relevance_map.values is not None:
                break
        pump(app, 0.5)
        grab(window, "concepts")
        view.page_button.click()
        pump(app, 0.5)
        grab(window.concepts.page, "concept-page")
        window.concepts.page.close()
        view.ablate_button.click()
        pump(app, 6.0)
        grab(window, "concept-ablated")
        window.close()
        app.quit()

    window.sigResultShown.connect(first)
    window.sigFailedShown.connect(lambda message: print(f"error: {message}", file=sys.stderr))
    QTimer.singleShot(300_000, app.quit)
    app.exec()
    return 0 if len(written) == 3 else 1


if __name__ == "__main__":
    sys.exit(main())
