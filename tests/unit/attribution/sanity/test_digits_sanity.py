"""The sanity checks' findings (Adebayo et al., NeurIPS 2018; issue 55 item 7), reproduced offline on
scikit-learn's 8 x 8 digits (1,797 images in its wheel) with a small CNN trained here in seconds.

The setting, written down because the findings depend on it (recipes tried while writing this: widths 8 and
16, Adam at lr 0.01 and 0.003, batches of 32 and 64, seeds 0 to 3):
- inputs normalised by the training images' mean and standard deviation, so that deleting a pixel (to 0 of
  the normalised input, as the RISE reference code deletes on ImageNet) puts the mean intensity there. On
  raw [0, 1] digits a deleted background pixel is already 0, so deletion ranks only the ink, and Grad-CAM's
  MoRF < random < LeRF held in 1 of 6 recipes (over 16 images); normalised, in 4 of 6 over 16 images and in
  8 of 8 over 48 (the two misses were sampling);
- three 3 x 3 convolutions at 8 x 8 and a global average pool before the logits, so Grad-CAM's layer (the one
  the head reads) has the input's resolution. With a max-pool to 4 x 4 before the last convolution (raw
  inputs, one recipe) Grad-CAM's LeRF fell faster than its MoRF; with a flattened head instead of the pool
  its maps were constant (0) on the images tried;
- deletion averaged over 48 correctly classified test images, 16 steps, 4 random orders each; MPRT over 16;
- cascading MPRT on the whole model (every layer re-initialised), Spearman of |map| at the last step;
- the shuffled-label twin trained as the model is, at a tenth of its learning rate (at the model's, it dies:
  one class predicted, zero gradients, constant maps). It learns nothing (10 % on its own shuffled labels):
  the paper's twin memorised them, which takes far more epochs than a test has.

Measured (1 thread): test accuracy 85 %; Spearman(|map|) at the last step, mean of 16 images: gradient
0.089, Grad-CAM 0.077, guided backprop 0.387; trained against shuffled gradient maps 0.146; deletion AUC
MoRF / random / LeRF, mean of 48: Grad-CAM 0.216 / 0.421 / 0.599, IG (16 steps) 0.071 / 0.421 / 0.716.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import ndimage
from sklearn.datasets import load_digits
from torch import nn

from inspector.core.attribution import attribute
from inspector.core.attribution.record import Attribution
from inspector.core.attribution.sanity.randomisation import mprt
from inspector.core.attribution.scores.faithfulness import faithfulness
from inspector.core.attribution.scores.similarity import similarity
from inspector.core.records import methods as table

TRAIN = 1500  # the first 1,500 digits train, the other 297 test
MPRT_IMAGES, DELETION_IMAGES, RANDOM_ORDERS = 16, 48, 4


def digits_net() -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(32, 10))


def trained(x: torch.Tensor, labels: torch.Tensor, lr: float = 1e-2) -> nn.Module:
    """Adam, 8 epochs of batches of 64, everything seeded."""
    torch.manual_seed(0)
    model = digits_net()
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    order = torch.Generator().manual_seed(0)
    for _epoch in range(8):
        for batch in torch.randperm(TRAIN, generator=order).split(64):
            loss = nn.functional.cross_entropy(model(x[batch]), labels[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    return model.eval()


@pytest.fixture(scope="module")
def digits():
    """(inputs (1797, 1, 8, 8) normalised, labels, the trained model, its twin trained on shuffled labels, the
    correctly classified test images' indices)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the same sums in the same order on any machine, and no fight for a busy one's cores
    try:
        data = load_digits()
        x = torch.tensor(data.images, dtype=torch.float32)[:, None] / 16.0
        x = (x - x[:TRAIN].mean()) / x[:TRAIN].std()
        labels = torch.tensor(data.target)
        model = trained(x, labels)
        # at lr 0.01 the shuffled twin dies (one class, no gradient: constant maps, different for no good reason)
        shuffled = trained(x, labels[torch.randperm(len(labels), generator=torch.Generator().manual_seed(1))], 1e-3)
        with torch.no_grad():
            predicted = model(x[TRAIN:]).argmax(1)
        right = [TRAIN + i for i in range(len(predicted)) if predicted[i] == labels[TRAIN + i]]
        assert len(right) >= 0.8 * len(predicted)  # the model learned the digits (85 % of the test images)
        yield x, labels, model, shuffled, right
    finally:
        torch.set_num_threads(threads)


def last_spearman(model, x, images, method) -> float:
    """The mean over `images` of Spearman(|map|) with every layer re-initialised (cascading MPRT)."""
    return float(np.mean([mprt(model, x[i:i + 1], method, seed=0).curve[-1] for i in images]))


def test_gradient_and_gradcam_change_when_the_model_is_randomised_and_guided_backprop_less(digits):
    x, _labels, model, _shuffled, right = digits
    images = right[:MPRT_IMAGES]
    gradient, gradcam, guided = (last_spearman(model, x, images, m) for m in ("saliency", "gradcam", "guided"))
    assert gradient < 0.3 and gradcam < 0.3  # the paper's Figure 2: both lose the original's ranking
    assert guided > gradient  # guided backprop keeps more of the image under a random model (the paper's finding)


def test_a_model_trained_on_shuffled_labels_has_other_gradient_maps(digits):
    x, labels, model, shuffled, right = digits
    images = right[:MPRT_IMAGES]
    learned = [attribute(model, x[i:i + 1], "saliency", int(labels[i])).map for i in images]
    guessed = [attribute(shuffled, x[i:i + 1], "saliency", int(labels[i])).map for i in images]
    assert all(m.max() > m.min() for m in guessed)  # maps that rank pixels, not a dead model's zeros
    alike = [similarity(a, b).spearman_abs for a, b in zip(learned, guessed)]
    assert np.mean(alike) < 0.5  # the data randomisation test: below MPRT's threshold for "changes"


@pytest.mark.parametrize("method, options", [("gradcam", None), ("ig", {"steps": 16})])
def test_deletion_falls_faster_in_the_maps_order_than_at_random_and_slowest_in_reverse(digits, method, options):
    x, _labels, model, _shuffled, right = digits
    aucs = {"morf": [], "random": [], "lerf": []}

    def deletion(image, order, index) -> float:
        curve = faithfulness(model, image, order, index, metrics=("deletion",), steps=16, sign="signed")
        return curve["deletion"].auc

    for k, i in enumerate(right[:DELETION_IMAGES]):
        image = x[i:i + 1]
        found = attribute(model, image, method, options=options)
        picture = found.picture  # what the map shows and the metrics rank (records.signs)
        aucs["morf"].append(deletion(image, picture, found.target_index))
        aucs["lerf"].append(deletion(image, -picture, found.target_index))
        aucs["random"].append(np.mean([deletion(image, np.random.default_rng([k, j]).random(picture.shape),
                                                found.target_index) for j in range(RANDOM_ORDERS)]))
    morf, random, lerf = (float(np.mean(aucs[k])) for k in ("morf", "random", "lerf"))
    assert morf < random < lerf


def sobel_map(model, x, target, layer, options) -> Attribution:
    """An "explanation" that ignores the model: the input's Sobel edge magnitude, summed over channels."""
    image = np.asarray(x[0].detach().cpu(), dtype=np.float64).sum(axis=0)
    edges = np.hypot(ndimage.sobel(image, axis=0), ndimage.sobel(image, axis=1))
    index = target if isinstance(target, int) else None
    return Attribution("sobel-edges", edges.astype(np.float32), f"class {index}", index)


@pytest.fixture
def sobel():
    yield table.register(table.Method("sobel-edges", "Sobel edges", "the input's edges (a test's model-blind map)",
                                      f"{__name__}:sobel_map"))
    table.unregister("sobel-edges")


def test_mprt_catches_a_map_that_ignores_the_model(digits, sobel):
    x, _labels, model, _shuffled, right = digits
    for i in right[:4]:
        found = mprt(model, x[i:i + 1], "sobel-edges", seed=0)
        assert found.curve.tolist() == [1.0] * len(found.steps)  # the same map at every step
        assert found.changes is False and found.verdict.startswith("does not change with the model")
    assert last_spearman(model, x, right[:4], "saliency") < 0.5  # where the gradient, on the same images, changes
