"""Deletion, insertion and ROAD as evaluation metrics: the AUC of each curve, by the project's scores
(`attribution.scores.faithfulness.scored`): deletion and insertion under the evaluation's protocol
(records.protocols) and steps, ROAD with its noise and seed."""

from __future__ import annotations

from ..attribution.scores.faithfulness import scored


def _curve(loaded, x, found, metric: str, settings):
    """The curve of `metric` for the map `found`, as `attribute --metrics --protocol` scores it (under
    settings.protocol; settings.steps its K, None for the protocol's own; the map's own baseline where it has one
    and the protocol reads one, else zeros)."""
    return scored(loaded, x, found, (metric,), settings.steps, protocol=settings.protocol).curves[0]


def deletion(loaded, x, found, settings) -> dict[str, float]:
    return {"auc": _curve(loaded, x, found, "deletion", settings).auc}


def insertion(loaded, x, found, settings) -> dict[str, float]:
    return {"auc": _curve(loaded, x, found, "insertion", settings).auc}


def road(loaded, x, found, settings) -> dict[str, float]:
    """ROAD's two AUCs (the most relevant pixels first, the least relevant first), as `attribute --metrics road`
    scores them, its noise (settings' road_noise) seeded by road_seed."""
    curves = {c.metric: c for c in scored(loaded, x, found, ("road",), road_noise=settings.option("road_noise"),
                                          road_seed=settings.option("road_seed")).curves}
    return {"morf_auc": curves["road-morf"].auc, "lerf_auc": curves["road-lerf"].auc}
