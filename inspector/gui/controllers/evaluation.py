"""Attribution > Evaluate… wired: the dialog's choices to the EvaluationState, its progress and summaries to the
Evaluation window (made when first wanted, a window of its own beside the main one), Esc and the window's Cancel to
the job's cancel, and Open… to an output folder's summary."""

from __future__ import annotations

from ..state.evaluation import EvaluationState
from ..views.evaluation.dialog import EvaluateDialog
from ..views.evaluation.window import EvaluationWindow
from .folder_job import OpensJobFolders, wire_build

WIDTH, HEIGHT = 1100, 640  # the window's size where the screen has room


class EvaluationController(OpensJobFolders):
    """`app`: the AppState; `parent`: the widget the window and dialogs belong to; `cancel_action`: Esc. Attribution >
    Open evaluation… opens a folder an evaluation was written to."""

    OPENS = ("evaluation-out", "Open an evaluation (a folder with summary.json)")

    def __init__(self, app, parent, cancel_action) -> None:
        self.parent = parent
        self.state = state = EvaluationState(app)
        self._view: EvaluationWindow | None = None
        cancel_action.triggered.connect(state.cancel)  # Esc stops an evaluation too

    @property
    def view(self) -> EvaluationWindow:
        """The Evaluation window, made and wired the first time it is wanted."""
        if self._view is None:
            state = self.state
            self._view = view = EvaluationWindow(self.parent)
            wire_build(state, view, self.run_dialog)
            view.sigOpen.connect(self.open_dialog)
            state.sigSaid.connect(view.say)
            state.sigSummary.connect(lambda done: view.show_summary(done.out_dir, done.summary))
            if state.building:
                view.set_building(True)
            if state.shown is not None:
                view.show_summary(state.shown.out_dir, state.shown.summary)
            self._size(view)
        return self._view

    def raise_view(self) -> EvaluationWindow:
        view = self.view
        view.show()
        view.raise_()
        view.activateWindow()
        return view

    # -- asking the user -------------------------------------------------------------------------------
    def run_dialog(self) -> None:
        """Attribution > Evaluate…: the dialog (the last choices offered again), then the job."""
        state = self.state
        why = state.why_not()
        if why:
            self.raise_view()
            state.refuse(why)  # one line, in the window and the banner
            return
        asked = state.asked
        last = None if asked is None else (asked.data_dir, asked.out_dir, asked.methods, asked.metrics,
                                            asked.protocol, asked.steps)
        choices = EvaluateDialog(self.raise_view(), last).ask()
        if choices is not None:
            self.run(*choices)

    def run(self, data_dir: str, out_dir: str, methods, metrics, protocol: str, steps: int | None) -> bool:
        self.raise_view()
        return self.state.run(data_dir, out_dir, methods, metrics, protocol, steps)

    def dialog_parent(self):
        return self.parent

    @staticmethod
    def _size(view) -> None:
        screen = view.screen().availableGeometry() if view.screen() is not None else None
        width, height = (WIDTH, HEIGHT) if screen is None else (min(WIDTH, int(screen.width() * 0.9)),
                                                               min(HEIGHT, int(screen.height() * 0.85)))
        view.resize(width, height)
