"""Chefer's relevance of one DETR query (inspector.core.attribution.chefer_detr) on tiny DETR and Conditional DETR
(two encoder and two decoder layers, random weights, saved with their image processor): the attention it taps is
transformers' own eager attention; the map equals the paper's encoder-decoder rules worked out here by hand over
the probabilities and gradients transformers hands out (`output_attentions`), the target the score the processor
reports; two queries give two maps; the command writes one; deformable attention is refused in one line."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from query_detectors import _config, _processor, model_class, save_detector

from inspector.core import SpecError, load_model
from inspector.core.attention.taps import AttentionTaps
from inspector.core.attribution import attribute
from inspector.core.detection.thresholds import set_score_threshold

transformers = pytest.importorskip("transformers")
DENSE = ("detr", "conditional_detr")
H, W = 40, 60


def _save(family: str, folder) -> None:
    """A tiny `family` detector of two encoder and two decoder layers (random weights, seeded and jittered so that
    no two queries score alike) and its image processor, as `save_pretrained` writes them."""
    from transformers.utils import logging

    logging.disable_progress_bar()
    torch.manual_seed(0)
    config = _config(transformers, family)
    config.encoder_layers = config.decoder_layers = 2
    model = model_class(family)(config).eval()
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=generator) * 0.3)
    model.save_pretrained(str(folder))
    _processor(transformers, family).save_pretrained(str(folder))


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("chefer-detr")
    for family in DENSE:
        _save(family, root / family)
    return root


@pytest.fixture(scope="module")
def loaded(root):
    models = {family: load_model(f"hf:{root / family}") for family in DENSE}
    for model in models.values():
        set_score_threshold(model.module, 0.0)  # random weights: every query a box
    return models


def _image(seed: int = 5) -> torch.Tensor:
    return torch.rand(1, 3, H, W, generator=torch.Generator().manual_seed(seed))


def _eager(family: str, folder, x: torch.Tensor):
    """The plain transformers model in eager attention on the processor's pixel values: its output with every
    attention's probabilities (in the graph)."""
    processor = transformers.AutoImageProcessor.from_pretrained(str(folder))
    model = model_class(family).from_pretrained(str(folder), attn_implementation="eager").eval()
    inputs = processor(images=x[0], do_rescale=False, return_tensors="pt")
    return model, inputs, model(**inputs, output_attentions=True)


def _by_hand(family: str, output, rank: int) -> tuple[torch.Tensor, int]:
    """(R_qi's row of the query of the rank-th detection, that query), written from the paper's rules as its DETR code
    does them (`generate_ours`, no LRP), over the attention probabilities transformers returns and their gradients."""
    logits = output.logits[0]
    if family == "detr":  # a softmax over the classes and "no object", a query's best class
        scores = logits.softmax(-1)[:, :-1].max(-1).values
        query = int(torch.argsort(scores.detach(), descending=True, stable=True)[rank])
        score = scores[query]
    else:  # a sigmoid per class, the best query x class pairs
        flat = logits.sigmoid().flatten()
        pick = int(torch.argsort(flat.detach(), descending=True, stable=True)[rank])
        query, score = pick // logits.shape[1], flat[pick]
    encoder = list(output.encoder_attentions)
    decoder = list(zip(output.decoder_attentions, output.cross_attentions))
    grads = torch.autograd.grad(score, encoder + [a for pair in decoder for a in pair])
    bars = iter((g[0] * a[0].detach()).double().clamp(min=0).mean(dim=0)  # rule 5: gradient-weighted, positive, head mean
                for a, g in zip(encoder + [a for pair in decoder for a in pair], grads))

    def handle_residual(r):  # eqs. 8 and 9; a row of zeros (0/0) stays zero (the code would drop the layer's sum)
        eye = torch.eye(r.shape[0], dtype=r.dtype)
        added = r - eye
        return torch.nan_to_num(added / added.sum(dim=-1, keepdim=True), nan=0.0) + eye

    tokens, queries = encoder[0].shape[-1], logits.shape[0]
    r_ii, r_qq = torch.eye(tokens, dtype=torch.float64), torch.eye(queries, dtype=torch.float64)
    r_qi = torch.zeros(queries, tokens, dtype=torch.float64)
    for _ in encoder:
        r_ii = r_ii + next(bars) @ r_ii  # rule 6 over the image's tokens
    for _ in decoder:
        cam = next(bars)
        r_qq, r_qi = r_qq + cam @ r_qq, r_qi + cam @ r_qi  # rules 6 and 7
        cam_qi = next(bars)
        r_qi = r_qi + handle_residual(r_qq).t() @ (cam_qi @ handle_residual(r_ii))  # rule 10
    return r_qi[query], query


@pytest.mark.parametrize("family", DENSE)
def test_the_taps_are_transformers_eager_attention(root, family):
    model, inputs, output = _eager(family, root / family, _image())
    plain = model_class(family).from_pretrained(str(root / family)).eval()  # transformers' default kernel (SDPA)
    paths = [f"model.encoder.layers.{i}.self_attn" for i in range(2)]
    paths += [f"model.decoder.layers.{i}.{a}" for i in range(2) for a in ("self_attn", "encoder_attn")]
    modules = dict(plain.named_modules())
    with AttentionTaps({p: modules[p] for p in paths}, probs=True) as taps, torch.no_grad():
        plain(**inputs)
    theirs = [*output.encoder_attentions, *(a for pair in zip(output.decoder_attentions, output.cross_attentions)
                                            for a in pair)]
    assert [t.path for t in taps.taps] == paths
    for tap, probs in zip(taps.taps, theirs):
        torch.testing.assert_close(tap.probs, probs.detach(), rtol=1e-5, atol=1e-6)
    assert theirs[-1].shape == (1, 2, 6, 54)  # 6 queries over the 6 x 9 feature grid's tokens


@pytest.mark.numeric
@pytest.mark.parametrize(("family", "rank"), [("detr", 0), ("detr", 3), ("conditional_detr", 2)])
def test_equals_the_papers_rules_by_hand(root, loaded, family, rank):
    x = _image()
    found = attribute(loaded[family], x, "chefer", f"box:{rank}")
    _model, _inputs, output = _eager(family, root / family, x)
    expected, query = _by_hand(family, output, rank)
    assert found.target == f"box:{rank}" and found.target_detection == rank and found.method == "chefer"
    assert found.cam.shape == (6, 9) and f"the row of query {query} on the 6 x 9 feature grid" in found.notes[0]
    assert expected.max() > 1e-4
    np.testing.assert_allclose(found.cam.reshape(-1), expected.float().numpy(), rtol=1e-4, atol=1e-4 * expected.max())
    assert found.map.shape == (H, W) and found.map.min() == 0 and found.map.max() == pytest.approx(1.0)


def test_two_queries_two_maps(loaded):
    first, second = (attribute(loaded["detr"], _image(), "chefer", f"box:{k}") for k in (0, 1))
    assert first.notes[0] != second.notes[0]  # two queries
    # random weights: the maps share the encoder's part; they differ by a tenth of their peak, far past rounding
    assert np.abs(first.cam - second.cam).max() > 0.05 * max(first.cam.max(), second.cam.max())


def test_the_command_writes_a_query_map(root, tmp_path, capsys):
    import json

    from PIL import Image

    from inspector.cli import main

    image = tmp_path / "image.png"
    Image.fromarray((np.random.default_rng(0).random((H, W, 3)) * 255).astype(np.uint8)).save(image)
    out = tmp_path / "chefer.npy"
    assert main(["attribute", "--model", f"hf:{root / 'detr'}", "--input", str(image), "--score-threshold", "0",
                 "--method", "chefer", "--target", "box:0", "--json", "--out", str(out)]) == 0
    said = json.loads(capsys.readouterr().out)
    written = np.load(out)
    assert said["target_detection"] == 0 and written.shape == (H, W)
    assert written.min() == 0 and written.max() == pytest.approx(1.0)


def test_deformable_attention_is_refused_in_one_line_before_the_model_runs(tmp_path):
    save_detector("rt_detr", tmp_path / "rt_detr")
    model = load_model(f"hf:{tmp_path / 'rt_detr'}")
    calls = []
    handle = model.module.register_forward_pre_hook(lambda *_: calls.append(1))
    try:
        with pytest.raises(SpecError, match=r"^Chefer's relevance reads a query's attention over the image: RT-DETR's "
                                            r"deformable attention has no dense map \(each query samples"):
            attribute(model, _image(), "chefer", "box:0")
    finally:
        handle.remove()
    assert calls == []
