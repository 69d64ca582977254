"""Evaluate… made by an engine that holds the model (a Workbench): the app's worker thread and a server's engine
thread both run an EvaluationRequest (records.evaluation) here, so the folder it writes is the same wherever it ran."""

from __future__ import annotations

from ..records.evaluation import EvaluationDone, EvaluationRequest


def evaluate_on(bench, request: EvaluationRequest, progress=None, cancel=None, back_to: str | None = None,
                ray_address: str | None = None) -> EvaluationDone:
    """`run_evaluation` as `request` says, on its model (loaded by `bench` when another is held), into its out_dir;
    the model goes back to `back_to` (None: the request's device) after. RunCancelled when `cancel()` came (the
    job's state is kept: the same request resumes it). `ray_address`: the images spread over that Ray cluster."""
    from .run import run_evaluation

    loaded, _tree = bench.load(request.model)
    try:
        summary = run_evaluation(loaded, request.data_dir, list(request.methods), list(request.metrics),
                                 request.out_dir, protocol=request.protocol, steps=request.steps, batch=request.batch,
                                 device=request.device, progress=progress, cancel=cancel,
                                 use_ray=ray_address is not None, ray_address=ray_address)
    finally:
        bench.move_to(back_to or request.device)
    return EvaluationDone(request.out_dir, summary)
