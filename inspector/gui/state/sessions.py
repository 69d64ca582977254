"""Session files and the app's state: the record of what is loaded and chosen now, and choosing what
a session names (its model, weights, input, device, gradient site, edits; the target and ticks once
its model has loaded)."""

from __future__ import annotations

from dataclasses import replace

from inspector.core.records.requests import ModelRequest

from .run_choices import listed_device


def session_of(state):
    """The session file's record of what `state` (an AppState) has loaded and chosen now."""
    from inspector.core.session.file import Session  # torch: kept out of the window's start
    from inspector.core.session.stored import stored_of

    model = state.model.request if state.model else ModelRequest()
    attribution, found = state.analysis.choice, state.analysis.found
    if attribution and found is not None:  # the map made for the choice, kept with it
        attribution = {**attribution, "stored": stored_of(found)}
    return Session(
        model=model.source, weights=model.weights, input=state.input, device=state.device, target=state.target,
        layers=tuple(state.ticked()), sites=tuple(sorted(state.sites())), edits=state.edits,
        input_grad=state.edits_active(), seed=state.model.seed if state.model else None,
        attribution=attribution,
    )


def apply_session(state, session, trust: bool = False) -> None:
    """Choose what `session` names: device, input and gradient site now; the target, ticks and edits
    once its model has loaded. A device this machine lacks changes nothing yet: the banner offers the whole
    session on the CPU (its input chosen while runs waited for a device was in the choosers, not the panels)."""
    device = listed_device(session.device, state.devices)
    if state.devices is not None and device not in dict(state.devices):
        state.notify("warning", f"The session ran on {device!r}; this machine has no such device (it has "
                                f"{', '.join(dict(state.devices))}). Nothing of it is loaded yet.",
                     ("Load it on the CPU", lambda: apply_session(state, replace(session, device="cpu"), trust)))
        return
    state.set_device(device)
    state.set_input(session.input)
    state.pending_target = session.target
    state.select_grad_site(next((site for site in ("grad_input", "params") if site in session.sites),
                                "grad_output").replace("params", "weight:grad"))
    state.pending_edits = tuple(session.edits)  # the session's model runs with them once it loads
    state.request_model(ModelRequest(session.model, session.weights, trust, session.seed),
                        ticks=set(session.layers))
    state.analysis.restore(session.attribution, session.model)
