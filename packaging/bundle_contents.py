"""What goes into the PyInstaller bundle, shared by the spec and tests/e2e/test_packaging_spec.py.

Plain Python (no PyInstaller import), so the test can check it without building anything.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP_NAME = "network-inspector"
ENTRY = "inspector/__main__.py"
ICON_PNG = "resources/icons/network-inspector.png"
ICON_ICO = "resources/icons/network-inspector.ico"

# Every folder under resources/ the app reads at run time (inspector/demo/paths.py: resources_dir()),
# copied whole to the same relative place, which is sys._MEIPASS/resources/... in the bundle.
RESOURCE_DIRS = ("resources/demo", "resources/samples", "resources/icons")
RESOURCE_SKIP = ("*.md", "*.txt", ".*", "__pycache__", "*.log")

# Imported lazily or by name (model sources like inspector.demo.toy:ToyMLP, the GUI from cli.py):
# every inspector module is listed, plus what third-party code loads indirectly.
EXTRA_HIDDEN_IMPORTS = (
    "torchvision.extension",   # loads torchvision's compiled ops (_C_stable) through torch.ops
    "torchvision.ops",
    "torchvision.models",
    "safetensors.torch",
    "av",                      # PyAV: video files and cameras (inspector.core.inputs.video imports it when one opens);
                               # pyinstaller-hooks-contrib's hook-av collects its submodules and FFmpeg libraries
    "PIL.PngImagePlugin", "PIL.JpegImagePlugin", "PIL.BmpImagePlugin", "PIL.TiffImagePlugin",
    "PIL.WebPImagePlugin", "PIL.GifImagePlugin",
    "pyqtgraph.graphicsItems.ViewBox.axisCtrlTemplate_generic",   # pyqtgraph picks these by name
    "pyqtgraph.graphicsItems.PlotItem.plotConfigTemplate_generic",
    "pyqtgraph.imageview.ImageViewTemplate_generic",
)

# transformers imports its model families lazily (by name, from a table), so PyInstaller's analysis
# never sees them: the image families `hf:` sources are built from are listed here, and every
# modeling_/configuration_ module of each is a hidden import (inspector.core.sources.hf_models).
HF_IMAGE_FAMILIES = (
    "vit", "deit", "dinov2", "dinov2_with_registers", "clip", "siglip", "convnext", "convnextv2", "swin", "swinv2",
    "beit", "data2vec", "segformer", "mobilevit", "mobilevitv2", "levit", "resnet", "regnet", "efficientnet",
    "bit", "dpt", "upernet", "mask2former", "vit_msn", "vit_mae", "dinat", "focalnet", "pvt", "pvt_v2", "hiera",
)

# `--self-test` runs inside the bundle: the inspector.selftest package (Qt-free steps, offscreen Qt
# steps, sandbox, runner). Found on disk like every inspector module; named here so that a
# build fails, not the self-test of a shipped bundle, when one goes missing.
SELFTEST_MODULES = (
    "inspector.selftest", "inspector.selftest.base", "inspector.selftest.steps", "inspector.selftest.qt_steps",
    "inspector.selftest.sandbox", "inspector.selftest.runner",
)

# Packages whose compiled libraries are opened by file name, not imported (torchvision finds
# _C_stable / image_stable next to its __init__ and hands them to torch.ops.load_library).
DYNAMIC_LIB_PACKAGES = ("torchvision",)
# Packages whose data files the code reads at run time (timm: the ImageNet class names of
# inspector.core.sources.timm_models.labels_of, in timm/data/_info; jsonschema_specifications: the JSON Schema
# meta-schemas jsonschema reads when it checks a session file, inspector.core.session.schema).
PACKAGE_DATA = ("timm", "jsonschema_specifications")
DYNAMIC_LIB_PATTERNS = ("*.so", "*.so.*", "*.pyd", "*.dll", "*.dylib")

# Modules the app never imports (checked: a full self-test run without them passes).
EXCLUDES = (
    "tkinter", "_tkinter", "PIL.ImageTk", "turtledemo", "idlelib",
    "triton",                   # torch.compile's GPU compiler, ~1 GB; torch works without it
    "tensorflow", "tensorboard", "jax", "onnx", "onnxruntime", "onnxscript",
    "matplotlib", "IPython", "jupyter_client", "ipykernel", "notebook", "pandas", "scipy",
    "pytest", "_pytest", "pytestqt", "hypothesis",
    "ray", "pyarrow",           # the atlas's optional --ray (the ray extra); the app never uses it
    "torch.utils.tensorboard", "torch.utils.benchmark", "torch.utils.bottleneck",
    "caffe2",
    "pyqtgraph.examples", "pyqtgraph.opengl", "pyqtgraph.jupyter", "pyqtgraph.canvas", "pyqtgraph.flowchart",
    "PyQt5", "PyQt6", "PySide2",
    # Qt modules PySide6 ships that neither the app nor pyqtgraph imports
    "PySide6.QtQml", "PySide6.QtQuick", "PySide6.QtQuickWidgets", "PySide6.QtQuickControls2",
    "PySide6.QtQuickTest", "PySide6.QtQuick3D", "PySide6.QtWebEngineCore", "PySide6.QtWebEngineWidgets",
    "PySide6.QtWebEngineQuick", "PySide6.QtWebChannel", "PySide6.QtWebSockets", "PySide6.QtWebView",
    "PySide6.Qt3DCore", "PySide6.Qt3DRender", "PySide6.Qt3DInput", "PySide6.Qt3DLogic", "PySide6.Qt3DAnimation",
    "PySide6.Qt3DExtras", "PySide6.QtMultimedia", "PySide6.QtMultimediaWidgets", "PySide6.QtSpatialAudio",
    "PySide6.QtPdf", "PySide6.QtPdfWidgets", "PySide6.QtCharts", "PySide6.QtDataVisualization",
    "PySide6.QtGraphs", "PySide6.QtBluetooth", "PySide6.QtNfc", "PySide6.QtPositioning", "PySide6.QtLocation",
    "PySide6.QtSensors", "PySide6.QtSerialPort", "PySide6.QtSerialBus", "PySide6.QtTextToSpeech",
    "PySide6.QtRemoteObjects", "PySide6.QtScxml", "PySide6.QtStateMachine", "PySide6.QtHttpServer",
    "PySide6.QtSql", "PySide6.QtXml", "PySide6.QtHelp", "PySide6.QtDesigner", "PySide6.QtUiTools",
    "PySide6.QtNetworkAuth", "PySide6.QtAxContainer", "PySide6.QtConcurrent",
)

# Files the analysis collects that nothing loads: build-time and profiling tools, static
# archives, headers (patterns match the bundle-relative destination path, "/" separated).
DROP_ALWAYS = (
    "torch/bin/protoc*", "torch/include/*", "torch/share/*", "*.a", "*.lib", "*.h", "*.hpp", "*.cuh",
    "nvidia/*/include/*", "nvidia/cu*/cccl/*",
    "*libnvperf_host*", "*libnvperf_target*", "*libpcsamplingutil*", "*libcheckpoint.so*",
    "*libnvblas.so*", "*libcufftw.so*", "*libcusolverMg.so*", "*libcufile_rdma.so*",
    "triton/*",
)

# CUDA libraries that `import torch` does not need (the torch libraries do not link them; they
# are opened only when a GPU computation first asks for them). NI_BUNDLE_CUDA=minimal drops
# them: ~1.1 GB less, fine on CPU-only machines, but on a GPU convolutions (cuDNN engines),
# linear algebra (cuSOLVER) and JIT-compiled kernels (NVRTC builtins) fail.
DROP_FOR_MINIMAL_CUDA = (
    "nvidia/cudnn/lib/libcudnn_*", "*libcusolver.so*", "*libnvrtc-builtins*", "torch/lib/libtorch_cuda_linalg.so",
)

CUDA_PROFILES = ("full", "minimal")


def cuda_profile() -> str:
    profile = os.environ.get("NI_BUNDLE_CUDA", "full").strip().lower() or "full"
    if profile not in CUDA_PROFILES:
        raise SystemExit(f"NI_BUNDLE_CUDA must be one of {', '.join(CUDA_PROFILES)}, not {profile!r}")
    return profile


def resource_files(root: Path = ROOT) -> list[Path]:
    """Every file copied from RESOURCE_DIRS (relative to `root`)."""
    out = []
    for folder in RESOURCE_DIRS:
        for path in sorted((root / folder).rglob("*")):
            rel = path.relative_to(root)
            if path.is_file() and not any(fnmatch.fnmatch(part, pat) for part in rel.parts for pat in RESOURCE_SKIP):
                out.append(rel)
    return out


def datas(root: Path = ROOT) -> list[tuple[str, str]]:
    """(source file, destination folder in the bundle) for every resource file."""
    return [(str(root / rel), rel.parent.as_posix()) for rel in resource_files(root)]


def package_datas() -> list[tuple[str, str]]:
    """(source file, destination folder) for the data files of PACKAGE_DATA (needs PyInstaller)."""
    from PyInstaller.utils.hooks import collect_data_files

    return [entry for package in PACKAGE_DATA for entry in collect_data_files(package)]


def inspector_modules(root: Path = ROOT) -> list[str]:
    """Every module of the inspector package, found on disk (nothing is imported)."""
    names = []
    for path in sorted((root / "inspector").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return names


def hf_model_modules() -> list[str]:
    """The modeling_/configuration_ modules of HF_IMAGE_FAMILIES in the installed transformers, found on
    disk (nothing is imported); TensorFlow and Flax variants left out."""
    import importlib.util

    spec = importlib.util.find_spec("transformers")
    if spec is None or not spec.submodule_search_locations:
        return []
    models = Path(list(spec.submodule_search_locations)[0]) / "models"
    names = ["transformers.models.auto"]
    for family in HF_IMAGE_FAMILIES:
        for path in sorted((models / family).glob("*.py")):
            stem = path.stem
            if stem.startswith(("modeling_", "configuration_")) and not stem.startswith(("modeling_tf_",
                                                                                          "modeling_flax_")):
                names.append(f"transformers.models.{family}.{stem}")
    return names


def hidden_imports(root: Path = ROOT) -> list[str]:
    modules = inspector_modules(root)
    missing = [name for name in SELFTEST_MODULES if name not in modules]
    if missing:
        raise SystemExit(f"self-test modules missing from inspector/: {', '.join(missing)}")
    return modules + list(EXTRA_HIDDEN_IMPORTS) + hf_model_modules()


def dropped(dest: str, profile: str | None = None) -> bool:
    """True for a collected file (bundle-relative `dest`) the bundle leaves out."""
    dest = dest.replace("\\", "/")
    patterns = DROP_ALWAYS + (DROP_FOR_MINIMAL_CUDA if (profile or cuda_profile()) == "minimal" else ())
    return any(fnmatch.fnmatch(dest, pat) for pat in patterns)


def referenced_resource_dirs(root: Path = ROOT) -> set[str]:
    """`resources/X` the code opens (resources_dir() / "X", demo_dir(), samples_dir()): folders or files."""
    found = set()
    for path in (root / "inspector").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        found.update(f"resources/{m}" for m in re.findall(r"resources_dir\(\)\s*/\s*[\"']([^\"'/]+)", text))
        if "demo_dir()" in text:
            found.add("resources/demo")
        if "samples_dir()" in text:
            found.add("resources/samples")
    return found
