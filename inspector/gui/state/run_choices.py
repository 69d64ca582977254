"""What a run captures and what the Layer and Compare tabs offer, worked out from the user's choices (Qt-free
rules the app's state applies: `AppState.sites`, `panel_keys`, `layer_names`, `visible_layers`, `build_request`)."""

from __future__ import annotations

from inspector.core.attention.supported import supported_text
from inspector.core.common.keys import layer_of, parse_layer_call


def sites_of(grad_site: str, edits) -> frozenset[str]:
    """Activations and grad_output always; grad_input or parameter gradients when shown or edited."""
    sites = {"output", "grad_output"}
    if grad_site in ("grad_input", "attention"):
        sites.add(grad_site)
    elif grad_site.endswith(":grad") or any(e.key.site == "grad" for e in edits):
        sites.add("params")
    return frozenset(sites)


def panel_keys_of(name: str, grad_site: str) -> tuple[str, str]:
    """The capture keys the Layer tab shows for layer `name` (`path` or `path#K`)."""
    call = parse_layer_call(name)
    grad = f"{call.layer}.{grad_site}" if grad_site.endswith(":grad") else str(call.key(grad_site))
    return str(call.key("output")), grad


def layer_names_of(result) -> list[str]:
    """The captured layers of a result (`path` or `path#K`) in model order: what the Layer and Compare tabs
    offer."""
    names = {}
    for capture in result.captures.values():
        key = capture.key
        if key.site in ("output", "grad_output") and key.index in (None, 0):
            names.setdefault(str(key.layer_call()), None)
    return list(names)


def visible_of(ticked: list[str], layer: str | None) -> tuple[str, ...]:
    """The layers whose statistics a run works out first: the one the Layer and Compare tabs show (the first
    ticked one until a layer is picked); the rest follow in a StatsUpdate."""
    shown = layer_of(layer or "")
    return (shown,) if shown in ticked else tuple(ticked[:1])


def attention_to_tick(loaded, grad_site: str) -> str | None:
    """The attention module a panel with no attention offers to tick and show (the model's first), or None."""
    own = loaded.attention if loaded is not None and grad_site == "attention" else ()
    return own[0] if own else None


def missing_text(loaded, grad_site: str, name: str, key: str) -> str:
    """Why the Layer tab shows nothing at `key` of layer `name`: a parameter the layer lacks, no attention there
    (`loaded`: the ModelInfo of the model loaded, or None), or a site not captured."""
    layer = layer_of(name)
    if grad_site == "attention":
        own = loaded.attention if loaded is not None else ()
        if own:  # the panel offers to tick and show it (attention_to_tick)
            return (f"No attention at {layer}: tick one of this model's {len(own)} attention modules "
                    f"(the first is {own[0]}) and show it.")
        return f"No attention at {layer}: this model has no attention module the app knows ({supported_text()})."
    if grad_site.endswith(":grad") and loaded is not None:
        param = grad_site.split(":")[0]
        owned = loaded.parameters_of(layer)
        if param not in owned:
            has = f"it has {', '.join(owned)}" if owned else "it has no parameters of its own"
            return f"{layer} has no {param} parameter ({has})."
    return f"Nothing captured at {key}."


def listed_device(name: str, devices) -> str:
    """The name a device has in the engine's list (`cuda:0`, ...): `cuda` (or `CUDA `), as a user, a session
    file or a setting may say it, is the first listed of that kind, as `core.devices.resolve_device` takes it;
    a name not listed is kept, trimmed (and refused by the state)."""
    names = [listed for listed, _ in devices or ()]
    text = name.strip().lower()
    if text in names:
        return text
    if ":" not in text:
        return next((listed for listed in names if listed.startswith(text + ":")), name.strip())
    return name.strip()


def run_request(state, ids):
    """What to run now: the loaded model (never a choice that failed), on what the user picked. Nothing while
    another model loads: its load runs it, and a run of the model before would load that one again after it. `ids`
    gives the run id, taken only when there is a run."""
    if state.model is None or state.loading is not None or not state.input \
            or (state.live.playing and state.live.frame is None):
        return None
    if state.devices is not None and state.device not in dict(state.devices):
        return None
    from inspector.core.engine.runner import RunSpec
    from inspector.core.records.requests import RunRequest

    compare, edits, against = state.edits_active(), state.edits, None
    if state.against is not None:
        from inspector.core.records.requests import AgainstRequest

        first, second = {"both": (edits, edits), "first": (edits, ()), "second": ((), edits)}[state.edits_on]
        edits, against, compare = first, AgainstRequest(state.against, tuple(second)), False
    spec = RunSpec.make(state.ticked(), state.sites(), edits, state.target,
                        input_grad=(compare or against is not None) and state.view == "compare")
    live = state.live.playing
    return RunRequest(state.model.request, state.input, state.device, spec, baseline=compare, analyse=not live,
                      run_id=next(ids), visible=state.visible_layers(), against=against,
                      frame=state.live.frame.rgb if live else None)
