"""One recipe per documentation screenshot: what the window is opened on and what is done before it is saved.
Each takes a `screens_app.Shooter` and the picture's name; `SHOTS` lists them in the order they are taken."""

from __future__ import annotations

DEMO_TICKS = ["conv1", "relu1", "block.conv2", "conv3", "relu3", "fc"]
VIT_ATTENTION = "encoder.layers.encoder_layer_11.self_attention"


def idle(shooter, window, what: str) -> None:
    """Wait until no run or job is going (Run's Cancel is off for a quarter of a second)."""
    from inspector.gui.screenshot import pump

    quiet = 0
    while quiet < 5:
        shooter.wait(lambda: not window.cancel_action.isEnabled(), what)
        pump(shooter.app, 0.05)
        quiet = quiet + 1 if not window.cancel_action.isEnabled() else 0


def getting_started(shooter, name: str) -> None:
    window = shooter.open()  # the app's own first ticks, the first sample shown in the Layer tab
    shooter.save(window, name)


def layer(shooter, name: str) -> None:
    window = shooter.open(ticks=DEMO_TICKS)
    window.state.select_layer("conv1")
    idle(shooter, window, "conv1 shown")
    window.activation_panel.zoom_channel(1)  # the channel that lights up on the star, enlarged in both panels
    shooter.save(window, name)


def compare(shooter, name: str) -> None:
    window = shooter.open(ticks=DEMO_TICKS)
    window.state.set_view("compare")
    idle(shooter, window, "the Compare tab's input gradient")
    shooter.wait_result(window, lambda: window.state.editing.add_text("block.conv2:output=zero_channels([0, 1, 2, 3, "
                                                                      "4, 5, 6, 7])"), "the edited run")
    window.state.select_layer("conv3")  # the edit's reach one layer on
    idle(shooter, window, "the comparison drawn")
    shooter.save(window, name, settle_s=1.5)


def _attribution(shooter, window, method: str = "gradcam") -> None:
    view = window.views.attribution
    window.state.set_view("attribution")
    view.method.setCurrentText(method)
    view.scores.setChecked(True)
    done = []
    window.state.analysis.sigAttribution.connect(done.append)
    view.compute.click()
    shooter.wait(lambda: bool(done), f"the {method} map")
    window.state.analysis.sigAttribution.disconnect(done.append)


def _demo_then(shooter, step):
    """The demo with DEMO_TICKS, `step(shooter, window)` done on it: the window."""
    window = shooter.open(ticks=DEMO_TICKS)
    step(shooter, window)
    return window


def attribution(shooter, name: str) -> None:
    shooter.save(_demo_then(shooter, _attribution), name, settle_s=1.5)


def attribution_compare_all(shooter, name: str) -> None:
    window = shooter.open(ticks=DEMO_TICKS)
    view = window.views.attribution
    window.state.set_view("attribution")
    for dock in (window.modules_dock, window.log_dock, window.side_dock, window.edits_dock, window.atlas_dock,
                 window.concepts_dock):  # the grid's room: three columns, the six cells in view
        dock.hide()
    view.compare.click()
    shooter.wait(lambda: view.comparing, "Compare all started", 20)
    shooter.wait(lambda: not view.comparing, "Compare all")
    shooter.save(window, name, settle_s=1.5)


def detector(shooter, name: str) -> None:
    window = shooter.open("demo-detector", "sample:detect_four_shapes")
    result = window.state.outcome.result
    x0, y0, x1, y1 = result.detections[1].box  # the second box, clicked at its centre as a user would
    h, w = result.input.shape[-2:]
    shooter.wait_result(window, lambda: window.input_view.sigClicked.emit((y0 + y1) / 2 / h, (x0 + x1) / 2 / w),
                        "the clicked box as the target")
    _attribution(shooter, window)
    shooter.save(window, name, settle_s=1.5)


def attention(shooter, name: str) -> None:
    """torchvision's vit_b_16 with random weights (seed 1): offline, 12 heads on a 14x14 patch grid."""
    window = shooter.open("vit_b_16", "sample:scene_ring_square_star", ticks=[VIT_ATTENTION], weights="random",
                          seed=1)
    window.state.select_layer(VIT_ATTENTION)
    window.grad_site_combo.setCurrentText("attention (per head)")
    shooter.wait_result(window, lambda: window.state.select_grad_site("attention (per head)"), "the attention run")
    window.input_view.sigClicked.emit(0.45, 0.55)  # the query: a patch near the middle
    idle(shooter, window, "the heads for that patch")
    window.banner.dismiss()  # random weights: the head's are all zero, so no gradient flows (said; not the point)
    shooter.save(window, name, settle_s=1.5)


def two_checkpoints(shooter, name: str) -> None:
    window = shooter.open(ticks=DEMO_TICKS)
    window.state.set_view("compare")
    idle(shooter, window, "the Compare tab")
    shooter.wait_result(window, lambda: window.against.choose_weights(str(shooter.perturbed_demo())),
                        "the run against the perturbed weights")
    idle(shooter, window, "the comparison drawn")
    shooter.save(window, name, settle_s=1.5)


def folder(shooter, name: str) -> None:
    window = shooter.open(ticks=DEMO_TICKS)
    shooter.wait_result(window, lambda: window.state.folder.open(str(shooter.shapes())), "the folder's first image")
    for _ in range(2):
        shooter.wait_result(window, lambda: window.state.folder.step(1), "the next image")
    shooter.save(window, name)


def atlas(shooter, name: str) -> None:
    window = shooter.open(ticks=["conv3", "relu3"])
    view, state = window.views.atlas, window.state.atlas
    state.build(str(shooter.shapes()), "atlas", top=6, batch=8)
    shooter.wait(lambda: state.opened is not None, "the atlas build")
    window.atlas_dock.show()
    window.atlas_dock.raise_()
    view.layer.setCurrentText("relu3")
    view.channel.setValue(5)
    shooter.wait(lambda: bool(view.cells) and view.cells[0][0].pixmap() is not None
                 and not view.cells[0][0].pixmap().isNull(), "the channel's top images")
    shooter.save(window, name, settle_s=1.5)


def _graph(shooter, window) -> None:
    graph = window.graph
    window.state.set_view("graph")
    window.graph_values.choose("gradient")
    shooter.wait(lambda: graph.layout is not None, "the graph laid out")
    shooter.wait(lambda: not window.views.graph.scene.drawing(), "the graph drawn")
    idle(shooter, window, "the graph's values")


def graph(shooter, name: str) -> None:
    shooter.save(_demo_then(shooter, _graph), name, settle_s=1.5)


def graph_open(shooter, name: str) -> None:
    window = _demo_then(shooter, _graph)
    window.graph.toggle("block")
    shooter.wait(lambda: "block" in window.graph.layout.open_groups, "the residual block opened")
    shooter.wait(lambda: not window.views.graph.scene.drawing(), "the opened graph drawn")
    view, frame = window.views.graph.view, window.views.graph.scene.frames["block"].sceneBoundingRect()
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    view.centerOn(frame.center().x(), frame.top() - 40 + shown.height() / 2)  # the group's top, the input above it
    shooter.save(window, name, settle_s=1.5)


def _concepts_window(shooter):
    """The demo with a dictionary of relu3 open, the image's concepts read and the strongest one's maps drawn."""
    folder = shooter.concepts()
    window = shooter.open(ticks=DEMO_TICKS)
    controller = window.concepts
    controller.open(str(folder))
    view = controller.view
    shooter.wait(lambda: view.reading is not None, "the image's concepts read")
    shooter.wait(lambda: view.relevance_map.values is not None, "the concept's relevance map")
    return window, controller


def concepts(shooter, name: str) -> None:
    window, _controller = _concepts_window(shooter)
    from PySide6.QtCore import Qt

    window.log_dock.hide()  # the dock's bars and both maps in view: the whole height, half the width
    window.resizeDocks([window.concepts_dock], [shooter.size[0] // 2], Qt.Horizontal)
    shooter.save(window, name, settle_s=1.5)


def concept_page(shooter, name: str) -> None:
    _window, controller = _concepts_window(shooter)
    controller.view.page_button.click()  # the picked concept's top images, its region outlined
    shooter.wait(lambda: controller.page is not None and controller.page.isVisible(), "the concept's page")
    shooter.save(controller.page, name, settle_s=1.0)
    controller.page.close()


def concept_ablated(shooter, name: str) -> None:
    window, controller = _concepts_window(shooter)
    shooter.wait_result(window, controller.view.ablate_button.click, "the run with the concept ablated")
    shooter.wait(lambda: window.tabs.currentWidget() is window.views.compare, "the Compare tab")
    shooter.save(window, name, settle_s=2.0)


SHOTS = {
    "getting-started": getting_started,
    "layer": layer,
    "compare": compare,
    "attribution": attribution,
    "attribution-compare-all": attribution_compare_all,
    "detector": detector,
    "attention": attention,
    "two-checkpoints": two_checkpoints,
    "folder": folder,
    "atlas": atlas,
    "graph": graph,
    "graph-open": graph_open,
    "concepts": concepts,
    "concept-page": concept_page,
    "concept-ablated": concept_ablated,
}
