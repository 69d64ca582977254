"""Per-capture statistics against float64 numpy, the reuse of reductions for the same memory,
and the CPU allocator setting that keeps runs from page-faulting."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
from dataclasses import replace

import numpy as np
import pytest
import torch
from torch import nn
from torch.multiprocessing.reductions import StorageWeakRef

from inspector.core import RunSpec, Sharing, run
from inspector.core.engine.stats import StatsBatch, flat_elements, tensor_stats

pytestmark = pytest.mark.numeric  # CI runs these again under another oneDNN instruction set


def reference(array: np.ndarray) -> dict:
    a = np.asarray(array, dtype=np.float64).ravel()
    finite = a[np.isfinite(a)]
    return {
        "mean": finite.mean(), "std": finite.std(), "min": finite.min(), "max": finite.max(),
        "l2": np.sqrt((finite ** 2).sum()), "zero_fraction": (a == 0).sum() / a.size,
        "nan": int(np.isnan(a).sum()), "inf": int(np.isinf(a).sum()),
    }


def assert_matches(stats, array, rel=1e-5):
    ref = reference(array)
    assert stats.shape == tuple(np.shape(array))
    for name in ("mean", "std", "l2"):
        assert getattr(stats, name) == pytest.approx(ref[name], rel=rel, abs=1e-6), name
    for name in ("min", "max", "zero_fraction", "nan", "inf"):
        assert getattr(stats, name) == pytest.approx(ref[name], rel=1e-7), name


def test_against_numpy_on_typical_tensors():
    g = torch.Generator().manual_seed(0)
    normal = torch.randn(2, 64, 28, 28, generator=g) * 3 + 1
    assert_matches(tensor_stats(normal), normal.numpy())
    relu = normal.relu()  # about 37% zeros
    s = tensor_stats(relu)
    assert_matches(s, relu.numpy())
    assert 0.3 < s.zero_fraction < 0.45


def test_by_hand():
    s = tensor_stats(torch.tensor([[0.0, 3.0], [-4.0, 0.0]]))
    assert (s.mean, s.min, s.max, s.l2, s.zero_fraction) == (-0.25, -4.0, 3.0, 5.0, 0.5)
    assert s.std == pytest.approx(np.sqrt((0.25**2 * 2 + 3.25**2 + 3.75**2) / 4))


def test_negative_zero_is_a_zero():
    s = tensor_stats(torch.tensor([-0.0, 0.0, 1.0, -0.0]))
    assert s.zero_fraction == 0.75


def test_non_finite_values_are_counted_not_averaged():
    t = torch.tensor([1.0, float("nan"), 3.0, float("inf"), -float("inf"), 0.0])
    s = tensor_stats(t)
    assert (s.nan, s.inf) == (1, 2)
    assert (s.mean, s.min, s.max) == (pytest.approx(4 / 3), 0.0, 3.0)
    assert s.zero_fraction == pytest.approx(1 / 6)


def test_a_large_offset_small_spread_tensor_is_exact():
    # float32 sums cannot resolve a spread of 1e-3 around 1e4: the exact path must take over
    t = torch.full((10_000,), 1e4) + torch.linspace(-1e-3, 1e-3, 10_000)
    s = tensor_stats(t)
    assert s.std == pytest.approx(np.float64(t.numpy()).std(), rel=1e-3)


def test_a_near_constant_gate_keeps_its_spread():
    # EfficientNet's squeeze-excitation gates: 32 sigmoids near 0.5 with a spread of 1e-3. From
    # float32 sums, E[x^2] - mean^2 came out 2% off; such tensors take the exact path.
    gate = torch.sigmoid(torch.linspace(-0.0069, 0.0069, 32) - 0.0015)
    assert_matches(tensor_stats(gate), gate.numpy(), rel=1e-4)


def test_tiny_values_keep_their_digits():
    # A parameter gradient of ~1e-22 (MobileNet's SE block): float32 squares are denormal.
    tiny = torch.randn(1000, generator=torch.Generator().manual_seed(1)) * 1e-22
    assert_matches(tensor_stats(tiny), tiny.numpy(), rel=1e-5)


def test_constant_zeros_empty_and_other_dtypes():
    assert_matches(tensor_stats(torch.full((3, 5), 2.5)), np.full((3, 5), 2.5))
    zeros = tensor_stats(torch.zeros(7))
    assert (zeros.mean, zeros.std, zeros.zero_fraction) == (0.0, 0.0, 1.0)
    empty = tensor_stats(torch.zeros(0, 4))
    assert empty.shape == (0, 4) and empty.mean == 0.0
    ints = torch.tensor([[1, 2], [3, 0]])
    assert_matches(tensor_stats(ints), ints.numpy())
    bf = torch.tensor([1.5, -2.0, 0.0, 4.0], dtype=torch.bfloat16)
    s = tensor_stats(bf)
    assert s.dtype == "bfloat16"
    assert_matches(s, bf.float().numpy())
    c = torch.tensor([3 + 4j, 0j])
    assert tensor_stats(c).max == 5.0


def test_permuted_tensors_are_reduced_in_place_and_slices_copied():
    base = torch.randn(1, 8, 5, 7)
    permuted = base.permute(0, 2, 3, 1)  # channels-last, as ConvNeXt's Permute returns
    flat = flat_elements(permuted)
    assert flat.data_ptr() == base.data_ptr() and flat.numel() == base.numel()
    assert_matches(tensor_stats(permuted), permuted.numpy())
    channels_last = base.contiguous(memory_format=torch.channels_last)
    assert flat_elements(channels_last).data_ptr() == channels_last.data_ptr()
    assert_matches(tensor_stats(channels_last), base.numpy())
    sliced = base[:, ::2, 1:]
    assert flat_elements(sliced).data_ptr() != base.data_ptr()  # not the same memory span: a copy
    assert_matches(tensor_stats(sliced), sliced.numpy())
    expanded = torch.randn(3, 1).expand(3, 4)  # stride 0: also a copy, every element counted
    assert_matches(tensor_stats(expanded), expanded.numpy())


def test_a_write_that_bumps_no_version_is_seen():
    # `.data` writes (and custom kernels writing through data_ptr) leave the version counter
    # alone: statistics must not be carried over from an earlier capture of the same memory.
    batch = StatsBatch()
    a = torch.tensor([1.0, -2.0, 3.0])
    batch.add("before", a)
    a.data.mul_(3)
    batch.add("after", a)
    out = batch.resolve()
    assert (out["before"].max, out["after"].max) == (3.0, 9.0)


class ScaledThroughData(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin, self.a, self.b = nn.Linear(4, 4), nn.Identity(), nn.Identity()

    def forward(self, x):
        h = self.lin(x)
        self.a(h)
        h.data.mul_(3)
        return self.b(h)


def test_engine_statistics_follow_writes_through_data():
    torch.manual_seed(0)
    model = ScaledThroughData()
    sharing = Sharing()
    for _ in range(2):  # copies, then shared memory
        result = run(model, torch.randn(2, 4), RunSpec.make(layers=["a", "b"], sites=["output"]), sharing=sharing)
        b = result.captures["b:output"]
        assert_matches(b.stats, b.array)


def test_batch_reports_strided_and_dense_views_at_the_same_address_apart():
    x = torch.arange(8.0)
    batch = StatsBatch()
    batch.add("every_other", x[::2])  # 0, 2, 4, 6: four elements spread over eight
    batch.add("first_four", x[:4])  # 0, 1, 2, 3: same address, same count, other elements
    out = batch.resolve()
    assert (out["every_other"].max, out["first_four"].max) == (6.0, 3.0)


def test_batch_holds_only_the_kept_values_of_a_copied_capture():
    batch = StatsBatch()
    original = torch.randn(1000)
    copy = original.clone()
    memory = StorageWeakRef(original.untyped_storage())
    batch.add("x", original, values=copy)
    del original
    gc.collect()
    assert memory.expired()  # nothing holds it: a GPU activation could be freed before the run ends
    assert batch.resolve()["x"].max == copy.max().item()


def test_exact_fallback_reads_the_values_kept_at_capture_time():
    batch = StatsBatch()
    shared = torch.full((100,), 5.0)  # constant: statistics come from the exact path
    batch.add("c", shared)
    batch.keep_values("c", shared.clone())  # as the engine does before an in-place module runs
    shared.fill_(7.0)
    assert batch.resolve()["c"].mean == 5.0


class BnRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU(inplace=True)  # rewrites bn's output in place
        self.flat = nn.Flatten()
        self.fc = nn.Linear(4 * 6 * 6, 3)

    def forward(self, x):
        return self.fc(self.flat(self.relu(self.bn(self.conv(x)))))


def test_engine_statistics_before_and_after_an_in_place_module():
    torch.manual_seed(0)
    model = BnRelu().eval()
    x = torch.randn(1, 3, 6, 6)
    spec = RunSpec(("conv", "bn", "relu", "flat"), frozenset({"output", "grad_output"}))
    sharing = Sharing()
    for _ in range(3):  # the first run copies; later ones share memory where it is safe
        result = run(model, x, spec, sharing=sharing)
        for name, capture in result.captures.items():
            assert_matches(capture.stats, capture.array, rel=1e-4)
        bn, relu = result.captures["bn:output"].stats, result.captures["relu:output"].stats
        assert bn.min < 0 and bn.zero_fraction == 0 and relu.min == 0 and relu.zero_fraction > 0.2
        assert result.captures["flat:output"].stats.mean == pytest.approx(relu.mean)


class SometimesInPlace(nn.Module):
    inplace = True

    def __init__(self):
        super().__init__()
        self.on = False

    def forward(self, x):
        return x.mul_(2) if self.on else x


def test_engine_without_statistics_copies_before_an_in_place_module():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), SometimesInPlace(), nn.Linear(4, 2))
    spec = replace(RunSpec.make(layers=["0", "1"], sites=["output"]), stats=False)
    sharing = Sharing()
    run(model, torch.randn(2, 4), spec, sharing=sharing)  # 0:output is never changed: shared from now on
    model[1].on = True
    x = torch.randn(2, 4)
    result = run(model, x, spec, sharing=sharing)
    expected = model[0](x).detach().numpy()
    np.testing.assert_allclose(result["0:output"], expected, rtol=1e-6)
    assert result.captures["0:output"].stats is None


ALLOCATOR_PROBE = textwrap.dedent("""
    import ctypes, resource, sys, torch
    from inspector.core.engine.allocator import M_MMAP_THRESHOLD, _glibc, keep_freed_memory
    tuned = keep_freed_memory() if sys.argv[1] == "tuned" else False
    if not tuned and _glibc() is not None:  # glibc's starting threshold, held there (it adapts otherwise)
        _glibc().mallopt(M_MMAP_THRESHOLD, 128 * 1024)
    def faults():
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    def one_run():  # like a run that keeps its captures: many tensors alive, all freed at the end
        held = [torch.empty(1 << 19).fill_(1.0) for _ in range(64)]  # 64 x 2 MiB
        del held
    one_run()
    one_run()  # glibc settles in two runs (a few MiB still mapped afresh in the second, now and then)
    before = faults()
    one_run()
    print(tuned, faults() - before)
""")


def test_keeping_freed_memory_stops_page_faults_in_the_next_run():
    def probe(mode):
        out = subprocess.run([sys.executable, "-c", ALLOCATOR_PROBE, mode], capture_output=True, text=True, check=True)
        tuned, faults = out.stdout.split()
        return tuned == "True", int(faults)

    tuned, tuned_faults = probe("tuned")
    _, plain_faults = probe("plain")
    if sys.platform.startswith("linux") and tuned:
        assert plain_faults >= 30_000  # 128 MiB of 4 KiB pages mapped afresh each run
        assert tuned_faults < plain_faults / 8  # the freed blocks are reused (a few MiB of other noise)
    else:  # not glibc: nothing to tune, and it says so
        assert not tuned


def test_a_count_above_float32_precision_stays_exact():
    # 2^24 + 1 non-zeros (1..7, a healthy spread: the fast path) and one zero: a float32 row
    # would round the count to 2^24
    t = (torch.arange(2**24 + 2) % 7 + 1).float()
    t[0] = 0.0
    assert tensor_stats(t).zero_fraction == 1 / (2**24 + 2)


def test_integers_above_float32_precision_stay_exact():
    s = tensor_stats(torch.tensor([0, 16_777_217, -16_777_219]))
    assert (s.min, s.max, s.mean) == (-16_777_219.0, 16_777_217.0, -2 / 3)
