"""The PyInstaller spec stays in step with the app: resources, hidden imports, excludes, icon.

Checks packaging/bundle_contents.py (the lists the spec builds from) against the code and the
resources folder; building the bundle itself is .ci/run's job (bash packaging/build.sh).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "packaging" / "network-inspector.spec"


def _load_bundle_contents():
    spec = importlib.util.spec_from_file_location("bundle_contents", ROOT / "packaging" / "bundle_contents.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bc = _load_bundle_contents()


def _analysis_keywords() -> dict[str, str]:
    tree = ast.parse(SPEC.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Analysis":
            return {k.arg: ast.unparse(k.value) for k in node.keywords}
    raise AssertionError("the spec has no Analysis(...) call")


def test_spec_builds_from_the_shared_lists():
    keywords = _analysis_keywords()
    assert keywords["datas"] == "bc.datas(ROOT) + bc.package_datas()"
    assert keywords["hiddenimports"] == "bc.hidden_imports(ROOT)"
    assert keywords["excludes"] == "list(bc.EXCLUDES)"
    text = SPEC.read_text(encoding="utf-8")
    assert "bc.ENTRY" in text and "bc.ICON_ICO" in text and "bc.ICON_PNG" in text and "bc.dropped" in text


def test_package_data_the_code_reads_is_collected():
    """timm's ImageNet class names are files in timm/data/_info that labels_of reads at run time."""
    source = (ROOT / "inspector" / "core" / "sources" / "timm_models.py").read_text(encoding="utf-8")
    assert "ImageNetInfo" in source and "timm" in bc.PACKAGE_DATA


def _covered(rel: Path) -> bool:
    dests = {(Path(src).resolve(), dest) for src, dest in bc.datas(ROOT)}
    return ((ROOT / rel).resolve(), rel.parent.as_posix()) in dests


def test_every_resource_file_the_code_can_load_is_in_the_datas_at_its_own_place():
    """Files under what the code opens through resources_dir() (not docs such as a README screenshot)."""
    opened = bc.referenced_resource_dirs(ROOT) | set(bc.RESOURCE_DIRS)
    files = [p.relative_to(ROOT) for p in (ROOT / "resources").rglob("*") if p.is_file()]
    loadable = [f for f in files
                if any(f.as_posix() == d or f.as_posix().startswith(d + "/") for d in opened)
                and not any(f.match(pat) for pat in bc.RESOURCE_SKIP)]
    assert any(f.parent.as_posix() == "resources/demo" for f in loadable)
    missing = [str(f) for f in loadable if not _covered(f)]
    assert not missing, f"resources not in the bundle's datas (add their folder to RESOURCE_DIRS): {missing}"
    for src, dest in bc.datas(ROOT):
        assert not bc.dropped(f"{dest}/{Path(src).name}", "full")
        assert not bc.dropped(f"{dest}/{Path(src).name}", "minimal")


def test_the_resources_the_code_loads_are_covered():
    assert bc.referenced_resource_dirs(ROOT) <= set(bc.RESOURCE_DIRS)
    from inspector.core.inputs.files import resolve_sample
    from inspector.core.inputs.samples import list_samples
    from inspector.demo.model import default_weights_path

    weights = default_weights_path()
    needed = [weights, weights.with_suffix(".json"), ROOT / bc.ICON_PNG, ROOT / bc.ICON_ICO]
    needed += [resolve_sample(name) for name in list_samples()]
    for path in needed:
        rel = path.resolve().relative_to(ROOT)
        assert path.is_file(), f"{rel} is missing (python -m inspector.demo.train / make_samples)"
        assert _covered(rel), f"{rel} is loaded by the app but not bundled"
    assert list_samples(), "resources/samples holds no samples"


def test_hidden_imports_cover_what_the_app_imports_lazily():
    hidden = set(bc.hidden_imports(ROOT))
    on_disk = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
               for p in (ROOT / "inspector").rglob("*.py")}
    assert on_disk <= hidden, f"inspector modules missing from hidden imports: {sorted(on_disk - hidden)}"
    for name in ("inspector.gui.app", "inspector.gui.window.main_window", "inspector.demo.model", "inspector.demo.toy",
                 "inspector.demo.paths", "inspector.selftest", "inspector.selftest.steps",
                 "inspector.selftest.qt_steps", "torchvision.extension", "torchvision.ops",
                 "safetensors.torch"):
        assert name in hidden
    for name in bc.EXTRA_HIDDEN_IMPORTS:
        assert importlib.util.find_spec(name) is not None, f"hidden import {name} does not exist"
    assert set(bc.SELFTEST_MODULES) <= hidden
    for name in bc.SELFTEST_MODULES:
        assert importlib.util.find_spec(name) is not None, f"self-test module {name} does not exist"


def test_the_video_library_is_collected():
    """Live video input decodes with PyAV, imported only when a video opens: named as a hidden import
    (so the bundle has it although nothing imports it at start), never excluded; the self-test decodes a video."""
    source = (ROOT / "inspector" / "core" / "inputs" / "video.py").read_text(encoding="utf-8")
    assert "import av" in source and "av" in bc.EXTRA_HIDDEN_IMPORTS
    assert not any(e == "av" or e.startswith("av.") for e in bc.EXCLUDES)
    from inspector.selftest import STEPS

    assert "video" in [name for name, _ in STEPS]


def test_excludes_spare_every_module_the_app_imports():
    """Import the app, its GUI and run a capture with every excluded module blocked."""
    code = textwrap.dedent(f"""
        import sys
        EXCLUDES = {list(bc.EXCLUDES)!r}
        def excluded(name):
            return any(name == e or name.startswith(e + ".") for e in EXCLUDES)
        class Hide:  # as in the bundle: an excluded module is simply not there
            def __init__(self, finder):
                self.finder = finder
            def find_spec(self, name, path=None, target=None):
                if excluded(name) or not hasattr(self.finder, "find_spec"):
                    return None
                return self.finder.find_spec(name, path, target)
            def __getattr__(self, attr):
                return getattr(self.finder, attr)
        sys.meta_path[:] = [Hide(f) for f in sys.meta_path]
        import inspector.cli, inspector.selftest, inspector.selftest.qt_steps
        import inspector.gui.app, inspector.gui.window.main_window
        import torchvision.ops, pyqtgraph, safetensors.torch, torch
        import torchvision
        assert torchvision.ops.nms(torch.zeros(1, 4), torch.ones(1), 0.5).tolist() == [0]
        assert all(not excluded(m) for m in sys.modules), [m for m in sys.modules if excluded(m)]
        from inspector.core import capture, load_input, load_model
        model = load_model("inspector.demo.toy:ToyMLP")
        result = capture(model, torch.ones(1, 3), sites="output,grad_input,params",
                         edits=["relu1:grad_input=scale(2)"], target="output")
        assert result["fc1.bias:grad"].tolist() == [2.0, 0.0, 6.0, 0.0]
        print("ok")
    """)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]


@pytest.mark.parametrize("profile", ["full", "minimal"])
def test_dropped_files_never_include_what_import_torch_links(profile):
    for dest in ("torch/lib/libtorch.so", "torch/lib/libtorch_cpu.so", "torch/lib/libtorch_cuda.so",
                 "torch/lib/libc10.so", "torch/_C.cpython-311-x86_64-linux-gnu.so", "torch/lib/libtorch_python.so",
                 "nvidia/cu13/lib/libcudart.so.13", "nvidia/cu13/lib/libcublasLt.so.13", "nvidia/cudnn/lib/libcudnn.so.9",
                 "nvidia/cu13/lib/libnvrtc.so.13", "nvidia/cu13/lib/libcusparse.so.12", "nvidia/cu13/lib/libnvJitLink.so.13",
                 "nvidia/cusparselt/lib/libcusparseLt.so.0", "nvidia/nccl/lib/libnccl.so.2",
                 "PySide6/Qt/plugins/platforms/libqoffscreen.so", "PySide6/Qt/plugins/platforms/libqxcb.so",
                 "PySide6/Qt/plugins/imageformats/libqjpeg.so", "torchvision/_C_stable.so",
                 "resources/demo/demo.safetensors"):
        assert not bc.dropped(dest, profile), dest
    gpu_only = "nvidia/cudnn/lib/libcudnn_graph.so.9"
    assert bc.dropped(gpu_only, profile) == (profile == "minimal")
    assert bc.dropped("torch/include/ATen/ATen.h", profile) and bc.dropped("triton/_C/libtriton.so", profile)


def test_icon_files_exist_and_are_square():
    with Image.open(ROOT / bc.ICON_PNG) as png:
        assert png.size == (256, 256) and png.mode == "RGBA"
    with Image.open(ROOT / bc.ICON_ICO) as ico:
        assert (256, 256) in ico.info.get("sizes", {ico.size}) and (16, 16) in ico.info["sizes"]


def test_build_script_and_the_bundle_page_agree():
    script = (ROOT / "packaging" / "build.sh").read_text(encoding="utf-8")
    assert "pyinstaller packaging/network-inspector.spec" in script and "--distpath dist" in script
    page = (ROOT / "docs" / "bundle.md").read_text(encoding="utf-8")
    assert "bash packaging/build.sh" in page and "--self-test" in page
    assert "packaging/build.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


@pytest.mark.parametrize(("profile", "need_gb"), [("full", 5), ("minimal", 4)])
def test_build_script_stops_with_a_message_when_the_disk_is_nearly_full(tmp_path, profile, need_gb):
    """Not enough free disk: one clear line and exit 2 before PyInstaller runs (a full disk once
    failed a build half-way through COLLECT with a traceback). df and uv are stand-ins on PATH:
    df reports 1 KiB short of the need, uv records that it was called."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    free_kb = need_gb * 1024 * 1024 - 1
    (bin_dir / "df").write_text(
        "#!/bin/sh\necho 'Filesystem 1024-blocks Used Available Capacity Mounted'\n"
        f"echo '/dev/x 999999999 1 {free_kb} 99% /'\n", encoding="utf-8")
    (bin_dir / "uv").write_text(f"#!/bin/sh\ntouch {tmp_path / 'uv-ran'}\n", encoding="utf-8")
    for tool in ("df", "uv"):
        (bin_dir / tool).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "NI_BUNDLE_CUDA": profile}
    proc = subprocess.run(["bash", str(ROOT / "packaging" / "build.sh")], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == (f"error: the bundle needs about {need_gb} GB of free disk here; "
                           f"{free_kb // 1024} MB is free\n")
    assert not (tmp_path / "uv-ran").exists()


def test_entry_point_survives_missing_stdio():
    """A windowed build has sys.stdout/stderr = None: the entry point must not crash printing."""
    code = ("import sys; sys.stdout = sys.stderr = sys.__stdout__ = sys.__stderr__ = None\n"
            "sys.argv = ['network-inspector', '--help']\n"
            "from inspector.__main__ import entry\n"
            "raise SystemExit(entry())")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # everything went to os.devnull


def test_the_transformers_families_hf_sources_use_are_hidden_imports():
    """transformers loads its model modules by name; the bundle lists them (an hf: ViT in a bundle
    without them fails with 'transformers has no class ViTForImageClassification')."""
    from inspector.core.attention.site import HF_ATTENTION

    modules = bc.hf_model_modules()
    assert {module for module, _ in HF_ATTENTION} <= set(modules)
    for family in ("vit", "segformer", "convnext", "swin"):
        assert f"transformers.models.{family}.modeling_{family}" in modules
        assert f"transformers.models.{family}.configuration_{family}" in modules
    assert set(modules) <= set(bc.hidden_imports())
    assert not any(".modeling_tf_" in m or ".modeling_flax_" in m for m in modules)
