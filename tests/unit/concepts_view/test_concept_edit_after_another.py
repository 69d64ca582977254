"""A concept edit and another edit on the same key apply in the order given (the edit table's rule for any two
edits on a key): the concept's coefficients are those of the tensor the concept edit is given. Checked by hand
with a clamp, which does not commute with the ablation, and with scale, which does for NMF (NNLS is
homogeneous: c(kx) = k c(x))."""

from __future__ import annotations

import torch
from concept_view_models import image, nmf_dictionary, skipped

from inspector.core import capture
from inspector.core.concepts.dictionary import save_dictionary


def edited(loaded, x, edits):
    return torch.from_numpy(capture(loaded, x, layers="act", sites="output", edits=edits, target="sum")["act:output"])


def without_concept(d, t, concept):
    c = d.coefficients(t)[:, concept:concept + 1]
    return t - c * d.components[concept][None, :, None, None]


def test_clamp_then_ablate_and_ablate_then_clamp_are_each_done_in_order(tmp_path):
    loaded, x, d = skipped(), image(seed=11), nmf_dictionary()
    save_dictionary(tmp_path, d)
    ablate, clamp = f"act:output=ablate_concept(id=2, dict='{tmp_path}')", "act:output=clamp(max=0.3)"
    with torch.no_grad():
        a = loaded.module.act(loaded.module.stem(x))
    first = edited(loaded, x, [clamp, ablate])
    second = edited(loaded, x, [ablate, clamp])
    torch.testing.assert_close(first, without_concept(d, a.clamp(max=0.3), 2), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(second, without_concept(d, a, 2).clamp(max=0.3), rtol=1e-5, atol=1e-6)
    assert float((first - second).abs().max()) > 1e-2  # the order matters here


def test_scale_and_ablate_commute_for_nmf(tmp_path):
    loaded, x, d = skipped(), image(seed=12), nmf_dictionary()
    save_dictionary(tmp_path, d)
    ablate, scale = f"act:output=ablate_concept(id=1, dict='{tmp_path}')", "act:output=scale(2.0)"
    with torch.no_grad():
        a = loaded.module.act(loaded.module.stem(x))
    expected = 2 * without_concept(d, a, 1)
    torch.testing.assert_close(edited(loaded, x, [scale, ablate]), expected, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(edited(loaded, x, [ablate, scale]), expected, rtol=1e-4, atol=1e-5)
