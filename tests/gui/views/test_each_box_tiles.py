"""Issue 41, item 15: the app's Each box tiles are all one size: a cell with a longer title ("box:1 checkerboard
0.88") had a wider view than the others."""

from __future__ import annotations

import numpy as np

from inspector.core.attribution.record import Attribution
from inspector.gui.views.attribution.method_comparison import MethodComparison

NAMES = ("box:0 star 0.88", "box:1 checkerboard 0.88", "box:2 triangle 0.81", "box:3 circle 0.77")


def test_each_box_cells_have_views_of_one_size(qtbot):
    cells = MethodComparison()
    qtbot.addWidget(cells)
    cells.resize(900, 700)
    cells.show()
    qtbot.waitExposed(cells)
    asks = {name: ("gradcam", f"box:{k}") for k, name in enumerate(NAMES)}
    cells.start(NAMES, None, asks)
    for k, name in enumerate(NAMES):
        found = Attribution(method="gradcam", target=f"box:{k}", target_index=None,
                            map=np.linspace(0, 1, 160 * 160).reshape(160, 160) ** (k + 1))
        cells.add(name, found, np.zeros((160, 160, 3), np.uint8))
    qtbot.wait(50)
    sizes = {name: (round(view.geometry().width(), 3), round(view.geometry().height(), 3))
             for name, (view, _bar) in cells.cells.items()}
    assert len(set(sizes.values())) == 1, sizes
    width, height = next(iter(sizes.values()))
    assert width >= 150 and height >= 150  # CELL_MIN: never squeezed
