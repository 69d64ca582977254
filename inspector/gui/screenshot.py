"""Pictures of the app: `python -m inspector.gui.screenshot [OUT.png] [--size WxH] [--tabs DIR] [--model M] [--edit E]
[--against WEIGHTS] [--trust] [--input I] [--weights W --seed S] [--target T] [--method M] [--compare WHAT]
[--cell METHOD=TARGET]`.

Opens the app on the demo model (or `--model`) with a sample, waits for the first run,
shows the residual block and saves the window. `--tabs DIR` also saves every tab
(`DIR/<size>-<tab>.png`); `--trust` with it the trust cards
and a randomisation strip. `--target` is what the runs explain (a class, `box:K`, `text:"a dog"|"a cat"`);
`--method`, `--compare` or `--cell` save the Attribution tab instead: the method's map for the target, Compare all,
Each prompt or Each box, or the cells named side by side (`--cell legrad=3 --cell legrad=7`: one class each).
Settings go to a temporary folder so the user's are untouched;
runs offscreen unless a display is set (e.g. under `xvfb-run`).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path


def pump(app, seconds: float) -> None:
    """Let the app work (a run, an attribution, painting) for `seconds`."""
    import time

    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.01)


def shoot_trust(app, window, folder: Path, size: str) -> None:
    """The Attribution tab after Compare all and "Check these maps" (seed 0), then the first card's randomisation
    strip (a dialog, 0.9 of the window's width): `folder/SIZE-trust.png`, `folder/SIZE-strip.png`."""
    view = window.views.attribution
    window.tabs.setCurrentWidget(view)
    view.compare_methods()
    while view.comparing:
        pump(app, 0.2)
    panel = view.comparison.trust
    panel.seed.setValue(0)
    panel.check.click()
    while window.analysis.trust.trust.checking:
        pump(app, 0.2)
    pump(app, 1.0)
    window.grab().save(str(folder / f"{size}-trust.png"))
    print(f"wrote {folder / f'{size}-trust.png'}")
    first = next(iter(panel.cards), None)
    if first is None:
        return
    window.analysis.trust.open_strip(first)
    strip = window.analysis.trust.strip
    strip.resize(int(window.width() * 0.9), strip.height())
    pump(app, 1.0)
    strip.grab().save(str(folder / f"{size}-strip.png"))
    print(f"wrote {folder / f'{size}-strip.png'}")
    strip.close()


COMPARE = ("all", "prompts", "boxes")  # --compare: Compare all, Each prompt, Each box


def cell_asks(cells: list[str]) -> dict[str, tuple[str, str]]:
    """--cell METHOD=TARGET, each a cell: {its name: (method, target)} (an empty target: the run's)."""
    from inspector.core.target.text import target_words

    asks = {}
    for cell in cells:
        method, _, target = cell.partition("=")
        what = f"class {target}" if target.isdecimal() else target_words(target) if target else "the run's target"
        asks[f"{method} for {what}"] = (method.strip(), target.strip())
    return asks


def show_attribution(app, window, method: str | None, compare: str | None, cells: list[str]) -> None:
    """The Attribution tab, the module tree and the hook log hidden (the maps' room; the input and its predictions
    stay): `method`'s map for the run's target, or a comparison (Compare all, Each prompt or Each box with `method`;
    or `cells`, each METHOD=TARGET), once made."""
    import time

    view = window.views.attribution
    window.state.set_view("attribution")
    for dock in (window.modules_dock, window.log_dock):
        dock.hide()
    if method:
        view.method.setCurrentText(method)
    done = []
    if cells or compare:
        if cells:
            view.compare_cells(cell_asks(cells))
        else:
            {"all": view.compare_methods, "prompts": view.each_prompt.click, "boxes": view.explain_each_box}[compare]()
        finished = lambda: not view.comparing  # noqa: E731
    else:
        for signal in (window.state.analysis.sigAttribution, window.state.analysis.sigAttributionFailed):
            signal.connect(done.append)
        view.compute.click()
        finished = lambda: bool(done)  # noqa: E731
    end = time.perf_counter() + 150
    while not finished() and time.perf_counter() < end:
        pump(app, 0.1)
    pump(app, 1.5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m inspector.gui.screenshot")
    parser.add_argument("out", nargs="?", default="screenshot.png")
    parser.add_argument("--size", default="1500x950")
    parser.add_argument("--tabs", help="also save every tab into this folder")
    parser.add_argument("--model", default="demo")
    parser.add_argument("--layers", default='["conv1", "block.conv2", "conv3", "fc"]', help="JSON list of ticks")
    parser.add_argument("--show", default="block.conv2", help="the layer shown in the Layer tab")
    parser.add_argument("--gradient", default="", help="what the right panel shows: grad_output (default), "
                                                         "grad_input, weight gradient, bias gradient, attention (per head)")
    parser.add_argument("--edit", action="append", default=[], help="KEY=OP(ARGS) to add first (repeatable), "
                                                                      "so that the Compare tab has something to show")
    parser.add_argument("--against", help="a weights file for the model: the Compare tab compares with it")
    parser.add_argument("--trust", action="store_true", help="with --tabs: also the Attribution tab's Compare all "
                                                             "with its trust cards, and a randomisation strip")
    parser.add_argument("--input", default="sample:star", help="the input (a sample, an image file)")
    parser.add_argument("--weights", help="the model's weights (random: a torchvision model's random weights)")
    parser.add_argument("--seed", type=int, help="the seed of random weights")
    parser.add_argument("--target", help='what the runs explain: a class, box:K, text:"a dog"|"a cat" ...')
    parser.add_argument("--method", help="save the Attribution tab with this method's map for the target")
    parser.add_argument("--compare", choices=COMPARE, help="save the Attribution tab's Compare all (all), or "
                                                           "--method for each prompt (prompts) or box (boxes)")
    parser.add_argument("--cell", action="append", default=[], help="METHOD=TARGET (repeatable): save the "
                                                                    "Attribution tab with these maps side by side")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    out = Path(args.out)
    width, height = (int(v) for v in args.size.lower().split("x"))
    if not os.environ.get("DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from .window.main_window import MainWindow
    from .common.qt_messages import quiet_qt

    quiet_qt()
    app = QApplication.instance() or QApplication([])
    settings = QSettings(str(Path(tempfile.mkdtemp()) / "screenshot.ini"), QSettings.IniFormat)
    settings.setValue("model/source", args.model)
    settings.setValue("input", args.input)
    if args.weights:
        settings.setValue("model/weights", args.weights)
    if args.seed is not None:
        settings.setValue("model/seed", args.seed)
    settings.setValue(f"ticks/{args.model}", args.layers)
    window = MainWindow(settings=settings, ask_trust=lambda _name, _what: False)
    window.resize(width, height)
    window.show()
    shots = {"n": 0}

    first = 1 + bool(args.target)  # the result the rest starts from: the target's run

    def on_result(_outcome) -> None:
        shots["n"] += 1
        if shots["n"] == 1 and args.target:
            window.state.set_target(args.target)  # runs again
        if shots["n"] == first:
            window.show_layer(args.show)
            if args.gradient:
                window.grad_site_combo.setCurrentText(args.gradient)
                window.state.select_grad_site(args.gradient)  # re-runs when the site was not captured
            for edit in args.edit:
                window.state.editing.add_text(edit)  # each re-runs; the last result is saved
            if args.against:
                window.against.choose_weights(args.against)
        if shots["n"] == first + bool(args.edit or args.gradient or args.against):
            QTimer.singleShot(600, save)

    def save() -> None:
        out.parent.mkdir(parents=True, exist_ok=True)
        if args.method or args.compare or args.cell:
            show_attribution(app, window, args.method, args.compare, args.cell)
        window.grab().save(str(out))
        print(f"wrote {out}")
        if args.tabs:
            folder = Path(args.tabs)
            folder.mkdir(parents=True, exist_ok=True)
            tabs = window.tabs
            for i in range(tabs.count()):
                tabs.setCurrentIndex(i)
                if tabs.tabText(i) == "Attribution":
                    window.views.attribution.sigRequested.emit("gradcam", "", None, {})
                if tabs.tabText(i) == "Graph":  # its graph recorded, laid out and drawn, coloured by gradient L2
                    window.graph_values.choose("gradient")
                    pump(app, 4.0)
                pump(app, {"Attribution": 4.0, "Compare": 3.0}.get(tabs.tabText(i), 0.5))
                name = folder / f"{width}x{height}-{tabs.tabText(i).lower().replace(' ', '-')}.png"
                window.grab().save(str(name))
                print(f"wrote {name}")
            if args.trust:
                shoot_trust(app, window, folder, f"{width}x{height}")
        window.close()
        app.quit()

    window.sigResultShown.connect(on_result)
    window.sigFailedShown.connect(lambda message: print(f"error: {message}", file=sys.stderr))
    QTimer.singleShot(180_000, app.quit)
    app.exec()
    return 0 if out.is_file() else 1


if __name__ == "__main__":
    sys.exit(main())
