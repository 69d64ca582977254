"""What the screenshot recipes (screens_shots) share: windows opened on fresh settings in a temporary folder,
waits on what the app says, the saved picture, and the files a picture needs, made once and offline."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtGui import QImage

from inspector.gui.screenshot import pump

RESULT_S = 180.0  # the longest wait for a run, a map or a build (a ViT's run on two busy cores)


class Shooter:
    """Windows of `size` whose pictures go to `out`; the files they need go to `tmp`, the current folder (they are
    named relative to it, so no temporary folder's name shows in a picture)."""

    def __init__(self, app, size: tuple[int, int], tmp: Path, out: Path) -> None:
        self.app, self.size, self.tmp, self.out = app, size, tmp, out
        self.windows: list = []
        self._made: dict[str, Path] = {}
        self._opened = 0  # windows opened so far: each gets its own settings folder

    # -- windows ------------------------------------------------------------------------------
    def open(self, model: str = "demo", input: str = "sample:star", ticks: list[str] | None = None,
             weights: str | None = None, seed: int | None = None):
        """A shown window of `size` on `model` and `input`, its first result drawn."""
        from inspector.gui.window.main_window import MainWindow

        self._opened += 1
        folder = self.tmp / f"settings{self._opened}"
        folder.mkdir()
        settings = QSettings(str(folder / "inspector.ini"), QSettings.IniFormat)
        settings.setValue("model/source", model)
        settings.setValue("input", input)
        if weights:
            settings.setValue("model/weights", weights)
        if seed is not None:
            settings.setValue("model/seed", seed)
        if ticks is not None:
            settings.setValue(f"ticks/{model}", json.dumps(sorted(ticks)))
        settings.sync()
        window = MainWindow(settings=settings, ask_trust=lambda _name, _what: False)
        self.windows.append(window)
        window.resize(*self.size)
        window.show()
        self.wait_result(window, lambda: None, f"the first run of {model}")
        return window

    def wait_result(self, window, action, what: str) -> object:
        """Do `action` and wait for the next result shown; an error the window shows is raised."""
        got = []
        window.sigResultShown.connect(got.append)
        window.sigFailedShown.connect(got.append)
        try:
            action()
            self.wait(lambda: bool(got), what)
        finally:
            window.sigResultShown.disconnect(got.append)
            window.sigFailedShown.disconnect(got.append)
        if isinstance(got[0], str):
            raise RuntimeError(f"{what}: the window said: {got[0]}")
        return got[0]

    def wait(self, done, what: str, seconds: float = RESULT_S) -> None:
        """Let the app work until `done()` (raises after `seconds`)."""
        import time

        end = time.perf_counter() + seconds
        while not done():
            if time.perf_counter() > end:
                raise TimeoutError(f"{what}: not done after {seconds:.0f} s")
            pump(self.app, 0.05)

    def save(self, window, name: str, settle_s: float = 0.8) -> Path:
        """The window as OUT/NAME.png in 256 colours (a screenshot's flat colours: a quarter of the bytes)."""
        from PIL import Image

        pump(self.app, settle_s)
        image = window.grab().toImage().convertToFormat(QImage.Format_RGB888)
        width, height = image.width(), image.height()
        rgb = Image.frombuffer("RGB", (width, height), bytes(image.constBits()), "raw", "RGB",
                               image.bytesPerLine(), 1)
        path = self.out / f"{name}.png"
        rgb.quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(path, optimize=True)
        return path

    def close_all(self) -> None:
        for window in self.windows:
            window.close()
            window.deleteLater()
        self.windows.clear()
        pump(self.app, 0.2)

    # -- files a picture needs, made once -------------------------------------------------------
    def shapes(self) -> Path:
        """A folder of 32 of the demo's generated shapes (64x64 PNGs, a subfolder per class)."""
        if "shapes" not in self._made:
            from PIL import Image

            from inspector.demo.shapes import CLASSES, make_batch

            folder = self.tmp / "shapes"
            images, labels = make_batch(32, seed=7)
            for i, (image, label) in enumerate(zip(images, labels)):
                (folder / CLASSES[int(label)]).mkdir(parents=True, exist_ok=True)
                Image.fromarray(image).save(folder / CLASSES[int(label)] / f"{i:02d}.png")
            self._made["shapes"] = Path("shapes")  # relative: the pictures show no temporary folder's name
        return self._made["shapes"]

    def perturbed_demo(self) -> Path:
        """The demo's weights and biases each moved by noise of 15% of its own spread (seeded): a second checkpoint."""
        if "perturbed" not in self._made:
            import torch
            from safetensors.torch import load_file, save_file

            from inspector.demo.paths import demo_dir

            tensors = load_file(str(demo_dir() / "demo.safetensors"))
            generator = torch.Generator().manual_seed(0)
            for name, t in tensors.items():
                if name.endswith((".weight", ".bias")) and t.numel() > 1:  # not BatchNorm's running statistics
                    tensors[name] = t + 0.15 * t.std() * torch.randn(t.shape, generator=generator, dtype=t.dtype)
            path = self.tmp / "checkpoints" / "demo-epoch2.safetensors"
            path.parent.mkdir()
            save_file(tensors, str(path))
            self._made["perturbed"] = path.relative_to(self.tmp)
        return self._made["perturbed"]

    def concepts(self) -> Path:
        """A dictionary of the demo's relu3: K=6 concepts (NMF) learned over shapes()."""
        if "concepts" not in self._made:
            from inspector.core.concepts import learn_concepts
            from inspector.core.sources.loader import load_model

            learn_concepts(load_model("demo"), self.tmp / self.shapes(), "relu3", self.tmp / "concepts", k=6,
                           epochs=2, top=4)
            self._made["concepts"] = Path("concepts")
        return self._made["concepts"]
