"""How runs and loads end other than well, for `AppState`: Esc (what is on screen stays and the choosers
say what it is), a failure (a message, and the state back on what worked), and a model that loaded but
failed its first run (back at once to the one that ran). Functions of the state; no state of their own."""

from __future__ import annotations

from inspector.core.records.failure import Failure, sentence
from inspector.core.records.requests import ModelRequest


def cancel(state) -> None:
    """Esc: stop what the worker does. What is on screen stays, and the choosers say what it is: the
    input and target of the result shown come back. Statistics of that result a cancelled run had
    stopped are worked out again; those Esc itself stopped are said to be stopped."""
    stats_only = state.phase.startswith(("Statistics", "Diagnostics"))
    state.timer.stop()
    state.worker.cancel()
    show_what_ran(state)
    outcome = state.outcome
    if outcome is not None and (not outcome.complete or (outcome.analyse and outcome.analysis is None)):
        if stats_only:
            state.sigStatsStopped.emit(outcome)
        else:
            state.worker.request_finish(outcome.run_id)

def show_what_ran(state) -> None:
    if state.shown_choice is None or state.live.playing or state.folder.root():
        return
    source, target = state.shown_choice
    if state.input != source:
        state.input = source
        state.sigInputShown.emit(source)
    if state.target != target:
        state.target = target
        state.sigTargetShown.emit(target)

def on_failed(state, failure: Failure) -> None:
    if failure.what == "run" and failure.run_id and failure.run_id != state.last_run_id:
        return  # a newer run is on its way
    if failure.what == "run" and state.against is not None and \
            failure.kind in ("ModelLoadError", "UntrustedCodeError", "MismatchError"):
        state.against = None  # the second model cannot be compared: back to the baseline
        state.sigAgainstSet.emit(None)
    if failure.what == "run":
        state.live.failed()
    if failure.what == "atlas":
        state.atlas.failed(failure)
    if failure.what == "attribution":
        state.analysis.failed(failure)
    if failure.what == "load":
        load_failed(state, failure)
    elif failure.what == "run" and state.trying is not None and state.trying[0] is not None and not failure.cancelled \
            and (state.input == state.good_input or not state.good_input) and not state.live.playing:
        back_to_the_last_that_ran(state, failure)
    elif failure.what == "run" and state.folder.skip_unreadable(failure):
        return  # a warning, and the next image is on its way
    elif failure.what == "run" and failure.kind == "InputError" and state.good_input \
            and state.input != state.good_input and not state.live.playing:
        bad, state.input = state.input, state.good_input
        state.sigInputShown.emit(state.input)
        state.notify("error", f"Could not open {bad}: {sentence(failure.message)} Still showing {state.input}.",
                    details=failure.details)
    elif failure.cancelled:
        state.notify("info", failure.message)
    elif failure.what != "attribution":
        state.notify("error", failure.message, details=failure.details,
                    about="run" if failure.what == "run" else "")
    state.sigFailed.emit(failure)

def back_to_the_last_that_ran(state, failure: Failure) -> None:
    """The model just loaded failed its first run: go back to the one that ran before (the worker kept
    it, so at once), with its ticks. (The first model of a session stays, unremembered, for the user
    to fix the input.)"""
    (previous, ticks), state.trying = state.trying, None
    state.notify("error", f"{state.model.source} ({state.model.weights}) loaded, but its first run failed: "
                         f"{sentence(failure.message)} Back on {previous.source} ({previous.weights}).",
                details=failure.details, about="model")  # goes when another model is asked for
    state.back_to = previous.request
    state.request_model(previous.request, ticks=ticks)

def load_failed(state, failure: Failure) -> None:
    asked, state.loading = state.loading, None
    name = asked.source if asked else "the model"
    if state.model is not None:
        state.sigModelShown.emit(state.model.request)
        level, what = ("info", "Stopped loading") if failure.cancelled else ("error", "Could not load")
        state.notify(level, f"{what} {name}: {sentence(failure.message)} Still on {state.model.source} "
                           f"({state.model.weights}).", details=failure.details)
    elif asked is not None and asked != ModelRequest():
        state.notify("error", f"Could not load {name}: {sentence(failure.message)} Opened the demo model instead.",
                    details=failure.details)
        state.request_model(ModelRequest())
    else:
        state.notify("error", f"Could not load {name}: {failure.message}", details=failure.details)
