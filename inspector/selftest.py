"""`network-inspector --self-test [--json FILE]`: prove this install (or bundle) works, offline.

Each step is a small function that raises on failure. The whole test runs in a sandbox:
Qt on the offscreen platform, Python's network refused, an empty temporary TORCH_HOME,
and the current folder (where every temporary file goes) a new temporary folder whose
name is not ASCII (``自检-ü-…``). Exit status 0 only when every step passed; one line per
step on stdout; with ``--json FILE`` a report
``{"ok": bool, "steps": [{"name", "ok", "seconds", "error"}], ...}``.

Importing this module imports neither torch nor Qt: the steps import what they need, and
only the Qt steps import PySide6 and pyqtgraph.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import socket
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

NON_ASCII_PREFIX = "自检-ü-"
OFFLINE_MESSAGE = "network access is disabled during the self-test"
# Both edits act on gradients, so their effects are exact and checkable against a baseline run:
# relu1 is an in-place ReLU (the engine's in-place path), relu3 a plain one.
EDITS = ("relu1:grad_input=clamp(min=0)", "relu3:grad_input=scale(2)")
SITES = "input,output,grad_output,grad_input,params"
APP_TIMEOUT_S = 120.0


class SelfTestError(AssertionError):
    """A check inside a step did not hold."""


def check(condition: object, message: str) -> None:
    if not condition:
        raise SelfTestError(message)


@dataclass
class Context:
    """What the steps share: the sandbox folder, and results computed once and reused."""

    root: Path
    torch_home: Path
    cache: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)

    def demo(self):
        if "demo" not in self.cache:
            from inspector.core import load_model

            self.cache["demo"] = load_model("demo")
        return self.cache["demo"]

    def demo_input(self):
        if "input" not in self.cache:
            import torch

            from inspector.core import list_samples, load_input

            loaded = self.demo()
            images = [n for n in list_samples() if not n.startswith("toy")]
            if images:
                self.cache["input"] = load_input(f"sample:{images[0]}", loaded.preprocess, loaded.input_shape)
            else:  # the samples step reports missing samples; the engine checks still run
                self.cache["input"] = torch.randn(loaded.input_shape, generator=torch.Generator().manual_seed(0))
        return self.cache["input"]

    def run(self, edits: tuple[str, ...]):
        """A capture of every site on every leaf of the demo, with `edits`."""
        key = ("run", edits)
        if key not in self.cache:
            from inspector.core import capture

            self.cache[key] = capture(self.demo(), self.demo_input(), layers="all", sites=SITES,
                                      edits=list(edits), target="top1", device="cpu", input_grad=True)
        return self.cache[key]

    def qapp(self):
        from PySide6.QtWidgets import QApplication

        app = QApplication.instance()
        if app is None:
            app = QApplication([sys.argv[0] if sys.argv else "network-inspector", "-platform", "offscreen"])
            self.cache["own_qapp"] = app
        return app


# -- the steps ----------------------------------------------------------------------------

def step_environment(ctx: Context) -> None:
    """The sandbox holds: non-ASCII working folder, offline, empty TORCH_HOME, offscreen Qt."""
    import urllib.error
    import urllib.request

    cwd = Path.cwd()
    check(not str(cwd).isascii(), f"the working folder is ASCII-only: {cwd}")
    probe = cwd / "probe-ü.txt"
    probe.write_text("自检", encoding="utf-8")
    check(probe.read_text(encoding="utf-8") == "自检", "cannot round-trip a file in the working folder")
    check(os.environ.get("QT_QPA_PLATFORM") == "offscreen", "QT_QPA_PLATFORM is not offscreen")
    check(Path(os.environ["TORCH_HOME"]) == ctx.torch_home, "TORCH_HOME is not the sandbox's")
    check(not any(ctx.torch_home.rglob("*")), f"TORCH_HOME is not empty: {ctx.torch_home}")
    try:
        urllib.request.urlopen("http://192.0.2.1/", timeout=1)
    except (urllib.error.URLError, OSError) as exc:
        check(OFFLINE_MESSAGE in str(exc), f"network refused for another reason: {exc}")
    else:
        raise SelfTestError("the network is reachable inside the self-test sandbox")
    from inspector.demo.paths import resources_dir

    resources = resources_dir()
    check(resources.is_dir(), f"the resources folder is missing: {resources}")
    if getattr(sys, "frozen", False):
        check(Path(sys._MEIPASS) in resources.parents, f"a bundle reads resources outside it: {resources}")
    ctx.info.update(platform=platform.platform(), python=sys.version.split()[0],
                    frozen=bool(getattr(sys, "frozen", False)), executable=sys.executable,
                    filesystem_encoding=sys.getfilesystemencoding(), utf8_mode=sys.flags.utf8_mode,
                    resources=str(resources), cwd=str(cwd))


def step_torch(ctx: Context) -> None:
    """torch imports and computes (a CUDA wheel must still work on a machine without a GPU)."""
    import torch

    x = torch.arange(6.0).reshape(2, 3).requires_grad_()
    (x.sin() @ torch.ones(3)).sum().backward()
    check(torch.allclose(x.grad, x.detach().cos()), "autograd gave a wrong gradient")
    ctx.info.update(torch=torch.__version__, cuda_available=torch.cuda.is_available(),
                    cuda_build=torch.version.cuda)
    if torch.cuda.is_available():  # a GPU machine: the bundled CUDA libraries must work too
        y = torch.nn.functional.conv2d(torch.ones(1, 3, 8, 8, device="cuda"), torch.ones(4, 3, 3, 3, device="cuda"))
        check(float(y.max()) == 27.0, "a convolution on the GPU gave a wrong result")
        ctx.info["cuda_device"] = torch.cuda.get_device_name(0)


def step_demo_model(ctx: Context) -> None:
    """The bundled demo weights load and classify the input."""
    import torch

    from inspector.core import layer_tree

    loaded = ctx.demo()
    check(loaded.labels and len(loaded.labels) >= 2, f"demo labels missing: {loaded.labels}")
    tree = layer_tree(loaded)
    relus = [l.path for l in tree.layers if l.is_leaf and l.type_name == "ReLU"]
    for key in EDITS:
        layer = key.split(":", 1)[0]
        check(layer in relus, f"the demo has no ReLU {layer!r} (ReLUs: {relus})")
    with torch.no_grad():
        logits = loaded.module(ctx.demo_input())
    check(tuple(logits.shape) == (1, len(loaded.labels)), f"unexpected logits shape {tuple(logits.shape)}")
    check(bool(torch.isfinite(logits).all()), "the demo's logits are not finite")


def step_capture(ctx: Context) -> None:
    """Every site on every leaf captured, finite, and both edits had exactly their effect."""
    import numpy as np

    from inspector.core import layer_tree

    base, edited = ctx.run(()), ctx.run(EDITS)
    tree = layer_tree(ctx.demo())
    leaves = [l for l in tree.layers if l.is_leaf and l.path and l.calls]
    check(leaves, "the demo has no leaf modules")
    for layer in leaves:
        for site in ("input", "output", "grad_output", "grad_input"):
            check(f"{layer.path}:{site}" in edited.captures, f"no capture {layer.path}:{site}")
    module = ctx.demo().module
    for name, param in module.named_parameters():
        if param.requires_grad:
            check(f"{name}:grad" in edited.captures, f"no capture {name}:grad")
    for run in (base, edited):
        for key, array in run.arrays().items():
            check(np.isfinite(array).all(), f"{key} holds NaN or Inf")
    check(edited.input_grad is not None and np.abs(edited.input_grad).sum() > 0, "the input gradient is zero")

    def close(a, b) -> bool:
        return np.allclose(a, b, rtol=1e-4, atol=1e-6 * max(float(np.abs(b).max()), 1e-12))

    check(base["relu1:grad_input"].min() < 0, "baseline relu1:grad_input has no negative value to clamp")
    check(edited["relu1:grad_input"].min() >= 0, "clamp(min=0) on relu1:grad_input left negative values")
    check(not np.allclose(base["conv1.weight:grad"], edited["conv1.weight:grad"]),
          "the relu1 edit did not change conv1's weight gradient")
    check(close(edited["relu3:grad_input"], 2 * base["relu3:grad_input"]), "scale(2) did not double relu3:grad_input")
    check(close(edited["conv3.weight:grad"], 2 * base["conv3.weight:grad"]),
          "scale(2) on relu3 did not double conv3's weight gradient")
    check(close(edited["relu1:output"], base["relu1:output"]), "gradient edits changed an activation")
    ctx.info["captures"] = len(edited.captures)


def step_offline_pretrained(ctx: Context) -> None:
    """Offline, pretrained torchvision weights fail with a message naming the file to place."""
    from inspector.core import InspectorError, load_model

    try:
        load_model("resnet18", "pretrained")
    except InspectorError as exc:
        message = str(exc)
    else:
        raise SelfTestError("pretrained weights loaded although the network is off and TORCH_HOME is empty")
    check(str(ctx.torch_home) in message, f"the message does not point into TORCH_HOME: {message}")
    check(not [p for p in ctx.torch_home.rglob("*") if p.is_file()], "a file was written into TORCH_HOME")


def step_checkpoints(ctx: Context) -> None:
    """A safetensors file and a weights-only torch checkpoint of the demo weights round-trip."""
    import torch
    from safetensors.torch import save_file

    from inspector.core import load_model
    from inspector.core.checkpoints import read_checkpoint

    state = {k: v.detach().clone().contiguous() for k, v in ctx.demo().module.state_dict().items()}
    files = {Path.cwd() / "權重-ü.safetensors": lambda p: save_file(state, str(p)),
             Path.cwd() / "權重-ü.pt": lambda p: torch.save({"state_dict": state}, p)}
    for path, save in files.items():
        save(path)
        read = read_checkpoint(path)
        check(isinstance(read, dict) and read.keys() == state.keys(), f"{path.name}: keys differ")
        for k, v in state.items():
            check(torch.equal(read[k], v), f"{path.name}: {k} differs after the round trip")
        again = load_model("demo", weights=str(path))
        check(torch.equal(again.module.conv1.weight, state["conv1.weight"]), f"{path.name}: not applied")


class _Malicious:
    """Unpickling this would create the directory `marker`."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def step_untrusted_pickle(ctx: Context) -> None:
    """A pickle that would run code is refused (UntrustedCodeError) and its code never runs."""
    import pickle

    import torch

    from inspector.core import UntrustedCodeError
    from inspector.core.checkpoints import read_checkpoint

    marker = Path.cwd() / "pwned-ü"
    files = {Path.cwd() / "evil-ü.pt": lambda p: torch.save({"state_dict": _Malicious(str(marker))}, p),
             Path.cwd() / "evil-ü.pkl": lambda p: p.write_bytes(pickle.dumps(_Malicious(str(marker)), protocol=2))}
    for path, save in files.items():
        save(path)
        check(not marker.exists(), "writing the malicious file ran it")
        try:
            read_checkpoint(path)
        except UntrustedCodeError as exc:
            check("mkdir" in str(exc), f"{path.name}: the refusal does not name the code: {exc}")
        else:
            raise SelfTestError(f"{path.name}: a malicious pickle was not refused")
        check(not marker.exists(), f"{path.name}: the malicious pickle ran")


def step_samples(ctx: Context) -> None:
    """Every bundled sample image decodes; the sample tensors load."""
    import numpy as np

    from inspector.core.inputs import load_input, open_image, samples_dir

    folder = samples_dir()
    images = sorted(folder.glob("*.png"))
    check(images, f"no sample images in {folder}")
    for path in images:
        image = open_image(path)
        check(image.mode == "RGB" and image.width > 0 and image.height > 0, f"{path.name} decoded badly")
        check(np.asarray(image).std() > 0, f"{path.name} is one flat colour")
    for path in sorted(folder.glob("*.npy")):
        check(load_input(str(path)).numel() > 0, f"{path.name} is empty")
    ctx.info["samples"] = len(images)


def step_torchvision_ops(ctx: Context) -> None:
    """torchvision's compiled ops (torchvision._C) load: nms on three boxes."""
    import torch
    import torchvision.ops

    boxes = torch.tensor([[0.0, 0.0, 10.0, 10.0], [1.0, 1.0, 11.0, 11.0], [20.0, 20.0, 30.0, 30.0]])
    keep = torchvision.ops.nms(boxes, torch.tensor([0.9, 0.8, 0.7]), iou_threshold=0.5)
    check(keep.tolist() == [0, 2], f"nms kept {keep.tolist()}, expected [0, 2]")
    ctx.info["torchvision"] = torchvision.__version__


from inspector.selftest_qt import step_app_window, step_mosaic  # noqa: E402 (needs the names above)


Step = tuple[str, Callable[[Context], None]]
_FAILURES: list[BaseException] = []

STEPS: list[Step] = [
    ("environment", step_environment),
    ("torch", step_torch),
    ("demo_model", step_demo_model),
    ("capture", step_capture),
    ("offline_pretrained", step_offline_pretrained),
    ("checkpoints", step_checkpoints),
    ("untrusted_pickle", step_untrusted_pickle),
    ("samples", step_samples),
    ("torchvision_ops", step_torchvision_ops),
    ("mosaic", step_mosaic),
    ("app_window", step_app_window),
]


# -- the sandbox --------------------------------------------------------------------------

@contextlib.contextmanager
def offline() -> Iterator[None]:
    """Refuse every internet connection made through Python's socket module."""
    saved = (socket.socket.connect, socket.socket.connect_ex, socket.create_connection, socket.getaddrinfo)
    inet = {socket.AF_INET, getattr(socket, "AF_INET6", socket.AF_INET)}

    def refuse(*_args, **_kwargs):
        raise OSError(OFFLINE_MESSAGE)

    def connect(sock, address):
        if sock.family in inet:
            refuse()
        return saved[0](sock, address)

    def connect_ex(sock, address):
        if sock.family in inet:
            refuse()
        return saved[1](sock, address)

    socket.socket.connect, socket.socket.connect_ex = connect, connect_ex
    socket.create_connection, socket.getaddrinfo = refuse, refuse
    try:
        yield
    finally:
        (socket.socket.connect, socket.socket.connect_ex, socket.create_connection, socket.getaddrinfo) = saved


@contextlib.contextmanager
def sandbox(keep: bool = False) -> Iterator[Context]:
    """A new non-ASCII temporary folder as the working folder, an empty TORCH_HOME, offscreen Qt, offline."""
    root = Path(tempfile.mkdtemp(prefix=NON_ASCII_PREFIX)).resolve()
    torch_home = root / "torch-home"
    torch_home.mkdir()
    env = {"QT_QPA_PLATFORM": "offscreen", "TORCH_HOME": str(torch_home), "HF_HUB_OFFLINE": "1",
           "TMPDIR": str(root), "TEMP": str(root), "TMP": str(root)}
    saved_env = {k: os.environ.get(k) for k in env}
    saved_cwd, saved_tempdir = os.getcwd(), tempfile.tempdir
    os.environ.update(env)
    tempfile.tempdir = str(root)
    os.chdir(root)
    try:
        with offline():
            yield Context(root, torch_home)
    finally:
        os.chdir(saved_cwd)
        tempfile.tempdir = saved_tempdir
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def run_selftest(json_path: str | Path | None = None, steps: list[Step] | None = None,
                 keep: bool = False, out=None) -> int:
    """Run `steps` (default: all) in the sandbox; 0 when every one passed, else 1."""
    out = out if out is not None else sys.stdout
    json_path = Path(json_path).resolve() if json_path else None  # before the sandbox changes folder
    records, started = [], time.perf_counter()
    with sandbox(keep) as ctx:
        for name, fn in steps if steps is not None else STEPS:
            # Written before each step, so that a crash that kills the process (a Qt abort, a
            # segfault in a native library) still leaves a report naming the step it died in.
            _write_report(json_path, records + [{"name": name, "ok": False, "seconds": None,
                                                 "error": "did not finish: the process died in this step"}],
                          time.perf_counter() - started, ctx.info)
            t0 = time.perf_counter()
            error = None
            try:
                fn(ctx)
            except BaseException as exc:  # noqa: BLE001 - a step may fail any way; the report says how
                if isinstance(exc, KeyboardInterrupt):
                    raise
                error = f"{type(exc).__name__}: {exc}"
                _FAILURES.append(exc)  # keeps the failed step's objects (a half-built window's thread) alive
                if not isinstance(exc, SelfTestError):
                    error += "\n" + "".join(traceback.format_exception(exc)[-6:]).rstrip()
            seconds = time.perf_counter() - t0
            records.append({"name": name, "ok": error is None, "seconds": round(seconds, 3), "error": error})
            line = f"{'PASS' if error is None else 'FAIL'}  {name:<20} {seconds:7.2f} s"
            if error:
                line += "  " + error.splitlines()[0]
            print(line, file=out, flush=True)
        info = dict(ctx.info)
    ok = bool(records) and all(r["ok"] for r in records)
    total = time.perf_counter() - started
    failed = [r["name"] for r in records if not r["ok"]]
    print(f"self-test {'passed' if ok else 'FAILED: ' + ', '.join(failed)} "
          f"({sum(r['ok'] for r in records)}/{len(records)} steps, {total:.1f} s)", file=out, flush=True)
    _write_report(json_path, records, total, info)
    return 0 if ok else 1


def _write_report(json_path: Path | None, records: list[dict], seconds: float, info: dict) -> None:
    if json_path is None:
        return
    ok = bool(records) and all(r["ok"] for r in records)
    failed = [r["name"] for r in records if not r["ok"]]
    report = {"ok": ok, "steps": records, "failed": failed, "seconds": round(seconds, 3), "info": info}
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="network-inspector --self-test", description=__doc__.split("\n\n")[0])
    parser.add_argument("--self-test", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", metavar="FILE", help="also write the report as JSON to FILE")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (the PNGs drawn)")
    parser.add_argument("--only", metavar="STEP", action="append", choices=[n for n, _ in STEPS],
                        help="run only this step (repeatable)")
    args = parser.parse_args(argv)
    os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before anything can create a QApplication
    steps = [s for s in STEPS if s[0] in args.only] if args.only else None
    return run_selftest(args.json, steps, keep=args.keep)


if __name__ == "__main__":
    sys.exit(main())
