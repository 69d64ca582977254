"""The layout imports igraph without its plotting backends (pycairo, cairocffi, matplotlib: seconds of imports
that hold the GIL, for drawing the layout never does), and leaves them importable afterwards."""

import subprocess
import sys


def test_the_layout_imports_no_plotting_backend_and_leaves_them_importable():
    code = (
        "import sys\n"
        "from inspector.core.graph.layout.levels import order_level\n"
        "print(sorted(m for m in ('cairo', 'cairocffi', 'matplotlib') if m in sys.modules))\n"
        "print(order_level(['a', 'b', 'c'], {('a', 'b'), ('b', 'c'), ('a', 'c')}).layers)\n"
        "import cairocffi, matplotlib\n"
        "print('importable')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["[]", "(('a',), ('b', ('a', 'c', 1)), ('c',))", "importable"]
