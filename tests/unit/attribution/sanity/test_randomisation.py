"""Model-parameter randomisation (sanity.randomisation, issue 55 item 3): step 0 is the original map (its
similarity exactly 1), re-initialisation is reproducible from the seed (and drawn and returned without one),
every later step's map is the one made by hand on a copy with those layers re-initialised, the caller's model
and random state stay as they were, and bad arguments are one-line errors before any model work."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core.attribution import attribute
from inspector.core.attribution.sanity.randomisation import again_options, mprt
from inspector.core.attribution.sanity.reinit import (
    forward_order,
    layer_seed,
    reinitialise,
)
from inspector.core.common.errors import RunCancelled, RunError, SpecError

X = torch.rand(1, 3, 10, 10, generator=torch.Generator().manual_seed(0))


@pytest.mark.parametrize("method", ["saliency", "ig", "guided"])
def test_step_zero_is_the_original_exactly(small_net, method):
    found = mprt(small_net, X, method, seed=1, options={"steps": 8} if method == "ig" else None)
    assert np.array_equal(found.maps[0], attribute(small_net, X, method, options={"steps": 8} if method == "ig"
                                                    else None).map)
    first = found.similarities[0]
    assert (first.spearman_abs, first.spearman_signed, first.ssim) == (1.0, 1.0, 1.0)
    assert found.steps == ("original", "body.6", "body.2", "body.0")  # the logits first
    assert len(found.maps) == len(found.similarities) == 4


def test_cascading_steps_are_the_maps_of_copies_reinitialised_by_hand(small_net):
    found = mprt(small_net, X, "saliency", seed=7)
    target = found.target_index
    by_hand = copy.deepcopy(small_net)
    for i, layer in enumerate(forward_order(by_hand, lambda: by_hand(X))[::-1], start=1):
        reinitialise(by_hand, layer, 7)
        assert np.array_equal(found.maps[i], attribute(by_hand, X, "saliency", target).map)


def test_independent_steps_reinitialise_one_layer_each(small_net):
    found = mprt(small_net, X, "saliency", mode="independent", seed=7)
    cascading = mprt(small_net, X, "saliency", mode="cascading", seed=7)
    assert np.array_equal(found.maps[1], cascading.maps[1])  # the top layer alone, drawn alike in both modes
    for i, name in enumerate(found.layers, start=1):
        by_hand = copy.deepcopy(small_net)
        layer = next(lay for lay in forward_order(by_hand, lambda m=by_hand: m(X)) if lay.name == name)
        reinitialise(by_hand, layer, 7)
        assert np.array_equal(found.maps[i], attribute(by_hand, X, "saliency", found.target_index).map)


def test_reinitialisation_is_torchs_default_from_the_layers_seed(small_net):
    model = copy.deepcopy(small_net)
    layer = next(lay for lay in forward_order(model, lambda: model(X)) if lay.name == "body.6")
    assert layer.how == "reset_parameters"
    reinitialise(model, layer, 11)
    torch.manual_seed(layer_seed(11, "body.6"))
    fresh = nn.Linear(6, 4)  # its constructor draws with reset_parameters, as torch does for any new Linear
    assert torch.equal(model.body[6].weight, fresh.weight) and torch.equal(model.body[6].bias, fresh.bias)


def test_batch_norm_is_reset_to_its_defaults():
    model = nn.Sequential(nn.Conv2d(3, 2, 3), nn.BatchNorm2d(2), nn.Flatten(), nn.LazyLinear(3)).eval()
    model(X)
    with torch.no_grad():
        model[1].weight.fill_(3.0), model[1].running_mean.fill_(5.0), model[1].running_var.fill_(9.0)
    layer = next(lay for lay in forward_order(model, lambda: model(X)) if lay.name == "1")
    reinitialise(model, layer, 0)
    bn = model[1]
    assert bn.weight.tolist() == [1.0, 1.0] and bn.bias.tolist() == [0.0, 0.0]
    assert bn.running_mean.tolist() == [0.0, 0.0] and bn.running_var.tolist() == [1.0, 1.0]


class Tokens(nn.Module):
    """A model that defines its head first, owns a tensor itself and has a MultiheadAttention, whose out_proj
    its forward never calls."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.head = nn.Linear(4, 3)
        self.token = nn.Parameter(torch.randn(1, 1, 4))
        self.embed = nn.Conv2d(3, 4, 5, stride=5)
        self.attention = nn.MultiheadAttention(4, 1, batch_first=True)

    def forward(self, x):
        t = self.embed(x).flatten(2).transpose(1, 2)
        t = torch.cat([self.token.expand(len(t), -1, -1), t], dim=1)
        return self.head(self.attention(t, t, t)[0][:, 0])


def test_layers_go_in_forward_order_with_uncalled_owners_after_their_caller():
    model = Tokens().eval()
    layers = forward_order(model, lambda: model(X))
    assert [lay.name for lay in layers] == ["", "embed", "attention", "attention.out_proj", "head"]
    assert [lay.how for lay in layers] == ["normal", "reset_parameters", "normal", "reset_parameters",
                                           "reset_parameters"]


@pytest.mark.numeric
def test_a_layer_without_reset_parameters_is_drawn_from_a_normal_of_its_own_spread():
    model = Tokens().eval()
    std = float(model.token.detach().double().std())
    layer = forward_order(model, lambda: model(X))[0]
    reinitialise(model, layer, 5)
    torch.manual_seed(layer_seed(5, ""))
    expected = (torch.randn(1, 1, 4, dtype=torch.float64) * std).float()
    assert torch.equal(model.token.detach(), expected)


def test_the_same_seed_the_same_maps_and_none_draws_one_that_repeats(small_net):
    first, second = mprt(small_net, X, "saliency", seed=3), mprt(small_net, X, "saliency", seed=3)
    assert all(np.array_equal(a, b) for a, b in zip(first.maps, second.maps))
    assert not first.seed_drawn
    other = mprt(small_net, X, "saliency", seed=4)
    assert not np.array_equal(first.maps[1], other.maps[1])
    drawn = mprt(small_net, X, "saliency")
    assert drawn.seed_drawn and drawn.as_json()["seed"] == drawn.seed
    again = mprt(small_net, X, "saliency", seed=drawn.seed)
    assert all(np.array_equal(a, b) for a, b in zip(drawn.maps, again.maps))


def test_the_callers_model_and_random_state_are_untouched(small_net):
    before = {k: v.clone() for k, v in small_net.state_dict().items()}
    hooks = sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in small_net.modules())
    rng = torch.get_rng_state()
    mprt(small_net, X, "saliency", seed=2)
    mprt(small_net, X, "gradcam", mode="independent", seed=2)
    after = small_net.state_dict()
    assert before.keys() == after.keys() and all(torch.equal(before[k], after[k]) for k in before)
    assert sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in small_net.modules()) == hooks
    assert torch.equal(torch.get_rng_state(), rng)


def test_every_step_explains_the_originals_class_with_its_noise_seed(small_net):
    original = attribute(small_net, X, "smoothgrad", options={"samples": 3})  # a noise seed drawn for it
    seed = dict(original.details)["seed"]
    found = mprt(small_net, X, "smoothgrad", options={"samples": 3}, seed=2, original=original)
    assert found.maps[0] is original.map
    by_hand = copy.deepcopy(small_net)
    reinitialise(by_hand, forward_order(by_hand, lambda: by_hand(X))[-1], 2)
    again = attribute(by_hand, X, "smoothgrad", original.target_index, options={"samples": 3, "seed": seed})
    assert np.array_equal(found.maps[1], again.map)
    made = attribute(small_net, X, "ig", options={"baseline": "uniform", "steps": 4})
    repeated = again_options(made, {"baseline": "uniform", "steps": 4})  # the baseline as the tensor it was
    assert torch.equal(repeated["baseline"][0], torch.as_tensor(made.baseline))
    with pytest.raises(SpecError, match="The original map given to MPRT is a saliency Attribution"):
        mprt(small_net, X, "saliency", original=original)


def test_the_verdict_reads_the_last_step_against_the_threshold(small_net):
    low = mprt(small_net, X, "saliency", seed=3, threshold=0.5)
    last = float(low.curve[-1])
    assert low.decided_by == 3 and low.threshold == 0.5
    assert low.changes is (last < 0.5) and low.verdict.startswith("changes" if last < 0.5 else "does not")
    always = mprt(small_net, X, "saliency", seed=3, threshold=1.0)
    assert always.changes is (last < 1.0) and always.curve[-1] == last
    kept = mprt(small_net, X, "saliency", mode="independent", seed=2, threshold=0.05)
    assert min(kept.curve[1:]) >= 0.05 and kept.changes is False and "does not change with the model" in kept.verdict
    independent = mprt(small_net, X, "saliency", mode="independent", seed=3)
    assert independent.decided_by == 1 + int(np.argmin(independent.curve[1:]))


def test_progress_and_cancel(small_net):
    seen = []
    mprt(small_net, X, "saliency", seed=1, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    maps = []
    with pytest.raises(RunCancelled, match="MPRT cancelled"):
        mprt(small_net, X, "saliency", seed=1, cancel=lambda: len(maps) >= 2,
             progress=lambda done, total: maps.append(done))
    assert maps == [1, 2]


class Refuses(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 2)

    def forward(self, x):
        raise AssertionError("the model was run")


@pytest.mark.parametrize("arguments, words", [
    ({"mode": "sideways"}, "Unknown MPRT mode 'sideways'. Modes: cascading, independent."),
    ({"threshold": 2.0}, "The MPRT threshold is a Spearman correlation above 0 and at most 1, not 2.0."),
    ({"threshold": 0}, "The MPRT threshold is a Spearman correlation above 0 and at most 1, not 0."),
    ({"seed": -1}, "The MPRT seed must be a whole number"),
    ({"method": "sharpest"}, "Unknown method 'sharpest'"),
    ({"options": {"window": 3}}, "saliency takes no option 'window'"),
])
def test_bad_arguments_are_one_line_before_any_model_work(arguments, words):
    arguments = {"method": "saliency"} | arguments
    with pytest.raises(SpecError) as caught:
        mprt(Refuses(), X, **arguments)
    assert str(caught.value).startswith(words) and "\n" not in str(caught.value)


def test_a_model_with_no_parameters_is_refused():
    with pytest.raises(SpecError, match="^MPRT re-initialises the model's parameters, and this model has none.$"):
        mprt(nn.Sequential(nn.Flatten(), nn.Softmax(dim=1)), X, "saliency")


def test_a_loaded_model_is_copied_and_left_as_it_was():
    from inspector.core import load_input, load_model

    model = load_model("demo")
    x = load_input("sample:star", model.preprocess, model.input_shape)
    before = {k: v.clone() for k, v in model.module.state_dict().items()}
    found = mprt(model, x, "gradcam", seed=0)
    assert found.steps[0] == "original" and len(found.steps) > 2
    assert all(torch.equal(before[k], v) for k, v in model.module.state_dict().items())


class Uncopyable(nn.Sequential):
    def __deepcopy__(self, memo):
        raise TypeError("cannot pickle '_thread.lock' object")


def test_a_model_that_cannot_be_copied_says_so_in_one_line(small_net):
    model = Uncopyable(*small_net.body).eval()
    with pytest.raises(RunError, match=r"^MPRT re-initialises a copy of the model, and this model cannot be copied "
                                       r"\(copy.deepcopy raised TypeError: cannot pickle '_thread.lock' object\).$"):
        mprt(model, X, "saliency", seed=0)


def test_the_settings_are_read_without_torch():
    import subprocess
    import sys

    code = ("import sys; from inspector.core.records.sanity import MPRT_MODES, MPRT_THRESHOLD, check_mode; "
            "check_mode('independent'); print(MPRT_MODES, MPRT_THRESHOLD, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "('cascading', 'independent') 0.5 False"
