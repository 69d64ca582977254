"""The channel atlas against a brute-force computation with plain PyTorch hooks, image by image."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from PIL import Image

from inspector.core import load_input, load_model
from inspector.core.atlas import read_atlas, run_atlas, thumbnail_path
from inspector.core.folder_jobs import argmax_region
from inspector.core.common.errors import AtlasError, InputError, RunCancelled, SpecError
from inspector.core.inputs.files import list_images
from inspector.core.sources.grids import token_grid

pytestmark = pytest.mark.numeric  # CI runs these again under another oneDNN instruction set


def make_images(root, count, size=64, seed=0):
    """`count` random PNGs in two nested folders (ImageFolder layout) and one corrupt file."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        folder = root / ("cats" if i % 2 else "dogs") / ("deep" if i % 3 == 0 else "")
        folder.mkdir(parents=True, exist_ok=True)
        Image.fromarray(rng.integers(0, 256, (size, size + 8 * (i % 2), 3), dtype=np.uint8)).save(
            folder / f"img{i:02d}.png")
    (root / "cats" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n not really")
    return root


def brute_force(loaded, folder, layers, top):
    """Top-K and statistics from each image's full activations (float64 numpy), plain forward hooks."""
    files = list_images(folder)
    grid = token_grid(loaded.module)
    named = dict(loaded.module.named_modules())
    acts = {layer: [] for layer in layers}
    names = []
    for path in files.files:
        try:
            x = load_input(path, loaded.preprocess, loaded.input_shape)
        except InputError:
            continue
        names.append(files.relative(path))
        seen = {}
        handles = [named[l].register_forward_hook(lambda m, a, o, l=l: seen.setdefault(l, o.detach().clone()))
                   for l in layers]
        with torch.no_grad():
            loaded.module(x)
        for h in handles:
            h.remove()
        for layer in layers:
            a = seen[layer][0].double().numpy()
            if a.ndim == 3:  # (C, H, W)
                acts[layer].append((a.reshape(a.shape[0], -1), a.shape[2]))
            elif a.ndim == 1:  # (C,): one position
                acts[layer].append((a[:, None], 1))
            else:  # (tokens, C): the patch tokens on the grid
                acts[layer].append((a[grid.prefix:].T, grid.width))
    out = {}
    for layer in layers:
        a = np.stack([v for v, _ in acts[layer]])  # (N, C, P)
        width = acts[layer][0][1]
        score, arg = a.max(2), a.argmax(2)
        tops = []
        for c in range(a.shape[1]):
            order = sorted(range(len(names)), key=lambda i: (-score[i, c], i))[:top]
            tops.append([(names[i], score[i, c], arg[i, c] // width, arg[i, c] % width) for i in order])
        out[layer] = {"top": tops, "mean": a.mean(axis=(0, 2)), "std": a.std(axis=(0, 2)),
                      "frac_positive": (a > 0).mean(axis=(0, 2)), "acts": a, "width": width}
    return names, out


def rounding(a: np.ndarray) -> float:
    """What float32 rounding can move a value of this layer by: 1e-5 of its largest magnitude.

    The atlas (batched) and the reference (one image) run the same float32 sums with kernels that
    oneDNN picks by batch size and by the CPU's instruction set (SSE4.1, AVX2, AVX-512), so each
    sum is taken in another order. One reordered sum of n float32 products moves by about
    sqrt(n) * 6e-8 of its terms' size (n = 27 for conv1, 288 for each later 3x3 convolution: 3e-7 to
    1e-6), and the errors of the five convolutions before relu3 add up. Measured on this test's
    layers under all three instruction sets: at most 6.1e-7 of the layer's largest value (relu3),
    so 1e-5 leaves a margin of 16. A value near zero gets the layer's tolerance, not a relative one
    of its own (the failure this replaces: 1.8e-7 on a score of 0.0148, relative 1.2e-5).
    """
    return 1e-5 * float(np.abs(a).max())


def check_top(entries, acts, width, names, wanted, tol):
    """One channel's top K against the reference, allowing only the swaps rounding explains: an
    image whose maximum is within rounding of the reference's at that rank, a position where the
    image's value is within rounding of its maximum. Where no other image or position is that close,
    this is the exact image and position."""
    best = acts.max(1)  # (N,) each image's maximum of this channel
    index = {name: i for i, name in enumerate(names)}
    assert len(entries) == len(wanted) and len({e["image"] for e in entries}) == len(entries)
    np.testing.assert_allclose([e["score"] for e in entries], [s for _, s, _, _ in wanted], rtol=1e-5, atol=tol)
    for e, (name, score, _y, _x) in zip(entries, wanted):
        i = index[e["image"]]
        assert e["image"] == name or abs(best[i] - score) <= 2 * tol, (e, name, score)
        assert abs(e["score"] - best[i]) <= tol + 1e-5 * abs(best[i]), (e, best[i])
        assert acts[i, e["y"] * width + e["x"]] >= best[i] - 2 * tol, (e, best[i])
    for first, second in zip(entries, entries[1:]):  # equal scores (a ReLU's zeros): the earlier image first
        if first["score"] == second["score"]:
            assert index[first["image"]] < index[second["image"]]


def check_against(atlas, names, expected):
    assert atlas["images"] == len(names)
    for layer, want in expected.items():
        got = atlas["layers"][layer]
        tol = rounding(want["acts"])
        assert got["channels"] == len(want["top"])
        for c, (entries, wanted) in enumerate(zip(got["top"], want["top"])):
            check_top(entries, want["acts"][:, c], want["width"], names, wanted, tol)
        for key in ("mean", "std"):
            np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=tol)
        # (a value within float rounding of 0 may fall on the other side in a batch of another size)
        np.testing.assert_allclose(got["frac_positive"], want["frac_positive"], rtol=0, atol=1e-4)


@pytest.fixture(scope="module")
def demo():
    return load_model("demo")


def test_cnn_atlas_equals_brute_force(tmp_path, demo):
    data = make_images(tmp_path / "data", 11)
    layers = ["conv1", "block.conv2", "relu3", "fc"]
    done = []
    atlas = run_atlas(demo, data, ",".join(layers), 3, tmp_path / "out", batch=4,
                      progress=lambda d, t: done.append((d, t)))
    names, expected = brute_force(demo, data, layers, 3)
    check_against(atlas, names, expected)
    assert atlas["skipped"] == [{"path": "cats/broken.png", "reason": atlas["skipped"][0]["reason"]}]
    assert "broken.png" in atlas["skipped"][0]["reason"]
    assert done[-1] == (12, 12) and [d for d, _ in done] == sorted(d for d, _ in done)
    assert read_atlas(tmp_path / "out") == json.loads((tmp_path / "out" / "atlas.json").read_text())
    assert list(atlas) == ["model", "images", "skipped", "layers"] and atlas["model"] == "demo"


def test_thumbnails_are_the_receptive_field_around_the_argmax(tmp_path, demo):
    """conv1 (3x3, padding 1): a 3x3 box centred on the argmax; block.conv1 after conv-pool-conv-pool:
    18x18 pixels, rows 4y-7 .. 4y+10 (worked out by hand from the demo's layers)."""
    data = make_images(tmp_path / "data", 5)
    atlas = run_atlas(demo, data, "conv1,block.conv1", 2, tmp_path / "out", batch=2)
    for layer, box in (("conv1", lambda y, x: (x - 1, y - 1, x + 2, y + 2)),
                       ("block.conv1", lambda y, x: (4 * x - 7, 4 * y - 7, 4 * x + 11, 4 * y + 11))):
        for channel in (0, 5):
            for rank, e in enumerate(atlas["layers"][layer]["top"][channel]):
                left, top, right, bottom = box(e["y"], e["x"])
                left, top, right, bottom = max(left, 0), max(top, 0), min(right, 64), min(bottom, 64)
                assert argmax_region(tmp_path / "out", layer, e["y"], e["x"]) == (left, top, right, bottom)
                x = load_input(data / e["image"], demo.preprocess, demo.input_shape)
                picture = demo.preprocess.to_display(x)
                thumb = np.asarray(Image.open(thumbnail_path(tmp_path / "out", layer, channel, rank)))
                np.testing.assert_array_equal(thumb, picture[top:bottom, left:right])


def test_vit_atlas_equals_brute_force(tmp_path):
    vit = load_model("timm:vit_tiny_patch16_224", seed=4)
    data = make_images(tmp_path / "data", 5, size=40)
    layers = ["patch_embed.proj", "blocks.1.mlp.fc2"]
    atlas = run_atlas(vit, data, ",".join(layers), 2, tmp_path / "out", batch=3)
    names, expected = brute_force(vit, data, layers, 2)
    check_against(atlas, names, expected)
    assert atlas["layers"]["blocks.1.mlp.fc2"]["channels"] == 192
    geometry = json.loads((tmp_path / "out" / "thumbnails" / "regions.json").read_text())
    assert geometry["patch_embed.proj"]["size"] == [16.0, 16.0]  # one patch
    assert geometry["blocks.1.mlp.fc2"]["kind"] == "window"


def test_cancel_then_resume_gives_the_same_atlas(tmp_path, demo):
    data = make_images(tmp_path / "data", 9)
    whole = run_atlas(demo, data, "conv2,block.*", 3, tmp_path / "whole", batch=2)
    calls = []
    with pytest.raises(RunCancelled, match="run it again"):
        run_atlas(demo, data, "conv2,block.*", 3, tmp_path / "out", batch=2, cancel=lambda: len(calls) >= 3,
                  progress=lambda d, t: calls.append(d))
    assert (tmp_path / "out" / "atlas.partial.npz").is_file() and not (tmp_path / "out" / "atlas.json").exists()
    seen = []
    resumed = run_atlas(demo, data, "conv2,block.*", 3, tmp_path / "out", batch=2, progress=lambda d, t: seen.append(d))
    assert seen[0] == 4  # two batches of two were kept
    assert resumed == whole
    assert (tmp_path / "out" / "atlas.json").read_text() == (tmp_path / "whole" / "atlas.json").read_text()
    assert not (tmp_path / "out" / "atlas.partial.npz").exists()
    again = run_atlas(demo, data, "conv2,block.*", 3, tmp_path / "out", batch=2)  # finished: read back
    assert again == whole


def _snapshot(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_errors_change_nothing(tmp_path, demo):
    data = make_images(tmp_path / "data", 4)
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    with pytest.raises(InputError, match="No images in"):
        run_atlas(demo, tmp_path / "empty", "conv1", 2, tmp_path / "out1")
    with pytest.raises(SpecError, match="No layer matches 'nothing.*'"):
        run_atlas(demo, data, "nothing.*", 2, tmp_path / "out1")
    with pytest.raises(SpecError, match="No layer named"):
        run_atlas(demo, data, "conv9", 2, tmp_path / "out1")
    assert not (tmp_path / "out1").exists()
    run_atlas(demo, data, "conv1", 2, tmp_path / "out")
    before = _snapshot(tmp_path / "out")
    with pytest.raises(AtlasError, match="holds the atlas of a different job"):
        run_atlas(demo, data, "conv2", 2, tmp_path / "out")
    with pytest.raises(AtlasError, match="different job"):
        run_atlas(demo, data, "conv1", 3, tmp_path / "out")
    assert _snapshot(tmp_path / "out") == before
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "atlas.json").write_text('{"something": "else"}')
    with pytest.raises(AtlasError, match="did not make"):
        run_atlas(demo, data, "conv1", 2, tmp_path / "other")
    with pytest.raises(AtlasError, match="not a channel atlas"):
        read_atlas(tmp_path / "other")
    with pytest.raises(AtlasError, match="No atlas at"):
        read_atlas(tmp_path / "nowhere")
    with pytest.raises(SpecError, match="at least 1"):
        run_atlas(demo, data, "conv1", 0, tmp_path / "out2")


def test_list_images_folder_and_glob(tmp_path):
    data = make_images(tmp_path / "data", 4)
    (data / "notes.txt").write_text("not an image")
    listed = list_images(data)
    assert [listed.relative(p) for p in listed.files] == [
        "cats/broken.png", "cats/deep/img03.png", "cats/img01.png", "dogs/deep/img00.png", "dogs/img02.png"]
    globbed = list_images(str(data / "dogs" / "**" / "*.png"))
    assert [globbed.relative(p) for p in globbed.files] == ["deep/img00.png", "img02.png"]
    with pytest.raises(InputError, match="No images"):
        list_images(str(data / "*.jpg"))


def test_reduce_layer_counts_positives_beside_nan():
    from inspector.core.atlas.reduce import reduce_layer

    v = torch.tensor([[[1.0, -2.0, 0.0, 3.0], [float("nan"), 2.0, 5.0, -1.0]]])  # (B=1, C=2, P=4)
    r = reduce_layer(v, torch.full((2,), -torch.inf), inclusive=False)
    assert r.positive.tolist() == [[2.0, 2.0]]
    assert r.total[0, 0].item() == 2.0 and r.squares[0, 0].item() == 14.0
    assert r.candidates.tolist() == [[0, 0]] and r.argmax.tolist() == [3]  # a NaN score does not rank


def test_candidates_picked_on_the_host_as_a_gpu_does_equal_those_picked_in_the_hook():
    """Off the CPU the hook leaves the threshold's candidates to the host (reading them back inside the hook
    would stop the GPU at every layer): the same batch contribution either way, ties and NaN included."""
    from inspector.core.atlas.reduce import reduce_layer, to_partial

    v = torch.randn(3, 5, 7, generator=torch.Generator().manual_seed(0))
    v[2, 0] = 1.0  # a channel whose every position ties: the first position
    v[0, 3, 1] = float("nan")
    threshold = torch.tensor([0.5, 1.0, 3.0, -torch.inf, 1.5])
    images = np.array([10, 11, 12])
    for inclusive in (False, True):
        here, there = (to_partial(reduce_layer(v, threshold, inclusive, on_host=h), images) for h in (False, True))
        picked = [(b, c) for b in range(3) for c in range(5)
                  if (v[b, c].max() >= threshold[c] if inclusive else v[b, c].max() > threshold[c])]
        assert [(int(b), int(c)) for b, c in zip(here.image - 10, here.channel)] == picked
        assert here.pos.tolist() == [int(v[b, c].argmax()) for b, c in picked]
        for field in ("channel", "image", "score", "pos", "count", "mean", "m2", "positive"):
            np.testing.assert_array_equal(getattr(here, field), getattr(there, field))


def test_a_folder_of_unreadable_files_is_an_error(tmp_path, demo):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.png").write_bytes(b"nothing")
    with pytest.raises(AtlasError, match="None of the 1 files .* could be read as an image .*a.png"):
        run_atlas(demo, tmp_path / "data", "conv1", 2, tmp_path / "out")
    assert not (tmp_path / "out" / "atlas.json").exists()
