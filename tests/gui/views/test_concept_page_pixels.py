"""Issue 53 item 4: a concept's page drawn from its pixels (what a remote engine sends, and what the app now reads here
with `core.concepts.reading.page_picture`) is the page drawn from its file, pixel for pixel; a page that is not
there says why in its place."""

from __future__ import annotations

import numpy as np

RECORD = {"layer": "relu3", "data": {"root": "/data/images"},
          "concepts": [{"id": c, "top": [{"image": f"{k}.png", "score": 1.0 - k / 10} for k in range(3)]}
                       for c in range(2)]}


def _page(path):
    from PIL import Image

    rng = np.random.default_rng(3)
    rgb = rng.integers(0, 256, (64, 3 * 64 + 2 * 4, 3), dtype=np.uint8)
    Image.fromarray(rgb).save(path)
    return rgb


def test_a_page_from_its_pixels_is_the_page_from_its_file(qtbot, tmp_path):
    from inspector.core.concepts.reading import page_picture
    from inspector.gui.views.concepts.page import ConceptPage

    pages = tmp_path / "pages"
    pages.mkdir()
    rgb = _page(pages / "concept_000.png")
    picture = page_picture(str(tmp_path), 0)
    np.testing.assert_array_equal(picture.rgb, rgb)
    from_file, from_pixels = ConceptPage(), ConceptPage()
    for dialog in (from_file, from_pixels):
        qtbot.addWidget(dialog)
    from_file.show_concept(str(tmp_path), RECORD, 0, pages / "concept_000.png")
    from_pixels.show_concept(str(tmp_path), RECORD, 0)
    assert from_pixels.picture.pixmap().isNull() and "page" in from_pixels.picture.text()  # (it comes)
    from_pixels.show_picture(picture.rgb)
    assert from_pixels.picture.pixmap().toImage() == from_file.picture.pixmap().toImage()
    assert from_pixels.picture.pixmap().width() == 2 * rgb.shape[1]  # small tiles shown at twice their size
    assert from_pixels.caption.text() == from_file.caption.text()


def test_a_page_that_is_not_there_says_why(qtbot, tmp_path):
    from inspector.core.concepts.reading import page_picture
    from inspector.gui.views.concepts.page import ConceptPage

    gone = page_picture(str(tmp_path), 1)
    assert gone.rgb is None and gone.why.startswith("No page at ")
    dialog = ConceptPage()
    qtbot.addWidget(dialog)
    dialog.show_concept(str(tmp_path), RECORD, 1, gone.rgb, gone.why)
    assert dialog.picture.pixmap().isNull() and dialog.picture.text() == gone.why
    assert (dialog.folder, dialog.concept) == (str(tmp_path), 1) and dialog.use.isEnabled()
