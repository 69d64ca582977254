"""A run's result came (`on_result`, for AppState): stale ones are dropped, a model's first run that worked makes
it loaded and remembered, the layer shown is kept when the result has it, the input is remembered, and a model whose
warm runs are slow turns auto-run off (said, with a way back)."""

from __future__ import annotations

#: Warm runs slower than this turn auto-run off.
AUTO_RUN_LIMIT_S = 3.0


def on_result(state, outcome) -> None:
    """The worker's result for `outcome.run_id` (AppState's sigResult, emitted last, once the state is set)."""
    if outcome.run_id != state.last_run_id:
        return  # a newer request is on its way: drop the stale result
    state.outcome = outcome
    state.shown_choice = state.asked_on.get(outcome.run_id, state.shown_choice)
    state.sigNoticeOver.emit("run")  # a run's error above working panels would be stale
    if state.trying is not None:  # its first run worked: now it counts as loaded
        state.trying = None
        state.store.save_model(state.model)
        state.store.add_recent("model", state.model.source)  # kept only when it is a file
    result = outcome.result
    names = state.layer_names()
    state.select_layer(state.layer if state.layer in names else (names[0] if names else None))
    if not state.live.playing:  # a video frame's name is not an input to come back to
        state.good_input = state.input
        state.store.save_input(state.input, state.device)
        state.store.add_recent("input", state.folder.root() or state.input)
    else:
        if state.live.feed is not None:  # a video file that played is offered again (a camera is no file)
            state.store.add_recent("input", state.live.feed.source)
        state.live.result_shown()
    total = result.timings.get("total_s", 0.0)
    state.runs_of_model += 1
    warm = state.runs_of_model > 1  # a first run pays for kernels, caches and memory: not judged
    if warm and total > AUTO_RUN_LIMIT_S and state.auto_run and not state.live.playing:
        state.set_auto_run(False)
        state.notify("warning", f"Auto-run turned off: a run of {state.model.source} takes {total:.1f} s even "
                               f"warm. Changes now wait for F5 (the Auto-run switch in the toolbar says so).",
                    ("Turn auto-run back on", lambda: state.set_auto_run(True)))
    state.sigResult.emit(outcome)

