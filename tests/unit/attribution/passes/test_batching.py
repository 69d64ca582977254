"""Issue 26: the batch of copies is picked from the memory one copy takes (worked out by hand here) and the
free memory, under --max-memory; a pass that cannot fit one copy is refused before it starts."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core.attribution.integrated import integrated_gradients
from inspector.core.attribution.occlusion import occlusion
from inspector.core.attribution.passes import batching
from inspector.core.common.errors import SpecError


def small() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 8 * 8, 2)).eval()


def test_one_copys_memory_is_the_bytes_of_its_activations():
    x = torch.zeros(5, 3, 8, 8)  # only the first copy is measured
    # conv, relu and flatten: 4 * 8 * 8 float32 each (1024 bytes); linear: 2 floats (8); the copy: 768 bytes
    assert batching.copy_bytes(small(), x, grad=False) == 3 * 1024 + 8 + 768
    assert batching.copy_bytes(small(), x, grad=True) == 2 * (3 * 1024 + 8 + 768)  # and their gradients


def test_the_batch_fits_the_cap_and_one_copy_that_cannot_fit_is_refused(monkeypatch):
    model, x = small(), torch.zeros(1, 3, 8, 8)
    need = 3 * 1024 + 8 + 768
    monkeypatch.setattr(batching, "free_memory", lambda _device: 10**9)
    assert batching.pick_batch(model, x, 100, grad=False, max_memory=3 * need) == 3
    assert batching.pick_batch(model, x, 2, grad=False, max_memory=3 * need) == 2  # never more than needed
    assert batching.pick_batch(model, x, 1000, grad=False) == batching.CPU_MOST[False] == 8  # Esc stays quick
    assert batching.pick_batch(model, x, 1000, grad=True) == batching.CPU_MOST[True] == 8
    monkeypatch.setattr(batching, "free_memory", lambda _device: 4 * need)  # half of it: 2 copies
    assert batching.pick_batch(model, x, 100, grad=False) == 2
    with pytest.raises(SpecError, match="needs about 4 KB; 2 KB may be used on cpu \\(--max-memory\\).*Raise"):
        batching.pick_batch(model, x, 100, grad=False, max_memory=2 * 1024)
    monkeypatch.setattr(batching, "free_memory", lambda _device: need)
    with pytest.raises(SpecError, match="free memory"):
        batching.pick_batch(model, x, 100, grad=False)


def test_memory_sizes_are_read_as_people_write_them():
    assert batching.parse_memory("2GB") == 2 * 2**30 and batching.parse_memory("512 MB") == 512 * 2**20
    assert batching.parse_memory("1.5g") == int(1.5 * 2**30) and batching.parse_memory("4096") == 4096
    assert batching.parse_memory("64KiB") == 64 * 1024 and batching.parse_memory(None) is None
    for bad in ("lots", "-1GB", "0"):
        with pytest.raises(SpecError):
            batching.parse_memory(bad)


@pytest.mark.numeric
def test_a_picked_batch_gives_the_same_maps_as_a_given_one(monkeypatch):
    model = nn.Sequential(small(), nn.Softplus()).eval()
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(1))
    monkeypatch.setattr(batching, "free_memory", lambda _device: 10**9)
    picked = integrated_gradients(model, x, target=1, steps=9, max_memory=4 * batching.copy_bytes(model, x, True))
    given = integrated_gradients(model, x, target=1, steps=9, batch=9)
    assert dict(picked.details)["batch"] == 4 and dict(given.details)["batch"] == 9
    np.testing.assert_allclose(picked.map, given.map, rtol=1e-5, atol=1e-7)
    auto = occlusion(model, x, target=0, window=3, stride=2)
    np.testing.assert_allclose(auto.map, occlusion(model, x, target=0, window=3, stride=2, batch=1).map,
                               rtol=1e-5, atol=1e-7)


def test_copies_are_split_into_passes_of_nearly_equal_size():
    sizes = [p.stop - p.start for p in batching.passes(50, 8)]
    assert sizes == [7, 7, 7, 7, 7, 7, 8] and sum(sizes) == 50  # 7 passes, not six of 8 and one of 2
    assert [(p.start, p.stop) for p in batching.passes(25, 8)] == [(0, 6), (6, 12), (12, 18), (18, 25)]
    assert [(p.start, p.stop) for p in batching.passes(3, 8)] == [(0, 3)]
    assert [(p.start, p.stop) for p in batching.passes(4, 1)] == [(0, 1), (1, 2), (2, 3), (3, 4)]


def test_smoothgrad_measures_one_copy_on_its_first_saliency_run_not_on_another_pass(monkeypatch):
    import inspector.core.attribution.smoothgrad as method

    model, x = small(), torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(3))
    asked, forwards = [], []
    real = batching.pick_batch
    monkeypatch.setattr(method, "pick_batch", lambda *a, **k: asked.append(k.get("need")) or real(*a, **k))
    model.register_forward_hook(lambda m, i, o: forwards.append(i[0].shape[0]))
    method.smoothgrad(model, x, target=1, samples=6, noise=0.1, seed=0, batch=None)
    # the saliency run's one forward, then the 6 copies in one pass: no forward of its own to measure
    assert forwards == [1, 6]
    assert asked == [2 * (3 * 1024 + 8 + 768)]  # as copy_bytes measures it (worked out above)



class Viewing(nn.Module):
    """Two convolutions, then a `.view` that fails on a channels-last activation."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.conv, self.conv2, self.head = nn.Conv2d(3, 4, 3, padding=1), nn.Conv2d(4, 4, 1), nn.Linear(4 * 8 * 8, 2)

    def forward(self, x):
        y = self.conv2(self.conv(x))
        return self.head(y.view(y.shape[0], -1))


def test_a_forward_that_failed_part_way_is_not_counted_in_a_copys_memory():
    from inspector.core.attribution.passes.layout import Layout

    model, x = Viewing().eval(), torch.zeros(1, 3, 8, 8)
    # conv, conv2: 4 * 8 * 8 floats each (1024 bytes); head: 2 floats; the copy: 768 bytes
    assert batching.copy_bytes(model, x, grad=False) == 2 * 1024 + 8 + 768
    with torch.no_grad(), batching.LeafBytes(model) as counted:
        Layout(model, grad=False).run(model, x)  # channels-last fails at the view, then NCHW runs
    assert counted.per_copy(x, 1, grad=False) == 2 * 1024 + 8 + 768
    found = occlusion(Viewing().eval(), x, target=1, window=4, stride=4, max_memory=3 * (2 * 1024 + 8 + 768))
    assert dict(found.details)["batch"] == 3


def test_faithfulness_with_no_metrics_gives_no_curves():
    from inspector.core.attribution.scores.faithfulness import faithfulness

    assert faithfulness(small(), torch.zeros(1, 3, 8, 8), np.ones((8, 8)), 1, metrics=()) == {}


def test_free_memory_on_cuda_counts_what_torchs_allocator_holds_unused(monkeypatch):
    """After a big job torch keeps its blocks (the driver counts them as taken): the next job's batch shrank,
    or one copy was refused as not fitting, with the memory sitting in torch's cache."""
    asked = []

    def answer(value):
        return lambda device: asked.append(device) or value

    monkeypatch.setattr(torch.cuda, "mem_get_info", answer((2 * 2**30, 80 * 2**30)))
    monkeypatch.setattr(torch.cuda, "memory_reserved", answer(5 * 2**30))
    monkeypatch.setattr(torch.cuda, "memory_allocated", answer(2**30))
    assert batching.free_memory(torch.device("cuda", 1)) == (2 + 5 - 1) * 2**30
    assert asked == [torch.device("cuda", 1)] * 3  # that device's, not the current one's


def test_no_copies_make_no_pass_and_a_batch_under_one_is_refused():
    assert batching.passes(0, 8) == []  # nothing to run: no pass (faithfulness with no metrics)
    for bad in (0, None, 2.0, True):
        with pytest.raises(SpecError, match=f"batch must be a whole number of at least 1, not {bad!r}"):
            batching.passes(5, bad)
    batching.check_batch(None)  # not asked for: picked from the memory


def test_a_model_with_torchscript_inside_takes_a_cpus_batch_on_a_gpu_too(monkeypatch):
    """TorchScript takes no hooks, so one copy's memory is not measured there: a GPU's 64 copies a pass would
    be a guess."""
    monkeypatch.setattr(batching, "free_memory", lambda _device: 10**12)
    model, x, gpu = small(), torch.zeros(1, 3, 8, 8), torch.device("cuda", 0)
    assert batching.pick_batch(model, x, 100, grad=True, device=gpu) == batching.MOST == 64
    inside = nn.Sequential(torch.jit.script(small()))
    assert batching.pick_batch(inside, x, 100, grad=True, device=gpu) == batching.CPU_MOST[True] == 8
