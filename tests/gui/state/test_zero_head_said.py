"""Issue 41, item 8: a classifier head of zero weights (torchvision's random ViT) makes every gradient 0, and the
reason was only the Hook log's last line. It is said in a banner once the model loads (it goes when another model
is asked for) and on Gradient flow beside the zero gradients."""

from __future__ import annotations

from inspector.core.records.requests import ModelRequest

ZERO_HEAD = '''
import torch
from torch import nn


class ZeroHead(nn.Module):
    input_shape = (1, 3, 16, 16)

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.head = nn.Linear(4, 3)
        nn.init.zeros_(self.head.weight)  # as torchvision's ViT starts its head

    def forward(self, x):
        return self.head(self.flatten(self.pool(self.conv(x))))
'''

SAID = ("Every gradient before head is exactly 0: its weights are all zero (torchvision and timm start some classifier "
        "heads so, to be trained), so nothing flows back from the output. Load pretrained weights or a checkpoint to "
        "see gradients.")


def test_a_zero_head_is_said_in_a_banner_and_on_gradient_flow(ui, qtbot, open_window, tmp_path, image_file,
                                                              tiny_source):
    path = tmp_path / "zero_head.py"
    path.write_text(ZERO_HEAD)
    window = open_window(f"{path}:ZeroHead", image_file, ticks={"conv", "head"})
    assert window.banner.isVisible() and window.banner.text() == f"Warning: {SAID}" and window.banner.notice.level == "warning"
    window.tabs.setCurrentWidget(window.views.flow)
    qtbot.waitUntil(lambda: bool(window.views.flow.rows), timeout=10_000)
    assert [r.norm for r in window.views.flow.rows] == [0.0, 1.0]  # d(logit 0)/d(logits): one 1
    assert window.views.flow.summary.text().split(" · ")[:2] == [f"2 gradient captures, 1 exactly 0: {SAID}",
                                                                "vanishing (< 1e-07): conv:grad_output"]
    window.state.request_model(ModelRequest(tiny_source, trust=True))  # another model: the banner goes
    qtbot.waitUntil(lambda: not window.banner.isVisible(), timeout=20_000)
