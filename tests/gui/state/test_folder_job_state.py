"""Issue 54, item 1: one state part for a folder job's build (`gui/state/folder_job.FolderJobState`). The atlas's and
the concepts' states are both made of it, so the same events take them through the same phases (queued behind the
worker's job in hand, running, then done, cancelled or failed) and say the same on the way; the events are sent as
the worker sends them, to the states as the app makes them (fakes of the app and worker: no model, no thread)."""

from __future__ import annotations

from types import SimpleNamespace

from PySide6.QtCore import QObject, Signal

from inspector.core.records.failure import Failure
from inspector.core.records.requests import ModelRequest
from inspector.gui.state.atlas import AtlasState
from inspector.gui.state.concepts import ConceptsState
from inspector.gui.state.folder_job import PHASES, queued_text


class FakeJobs(QObject):
    sigAnswer = Signal(str, int, object)
    sigProgress = Signal(int, int)

    def __init__(self, parent) -> None:
        super().__init__(parent)
        self.asked, self.cancelled = [], 0

    def request(self, request) -> None:
        self.asked.append(request)

    def cancel(self) -> None:
        self.cancelled += 1


class FakeWorker(QObject):
    sigAnswer = Signal(str, int, object)
    sigAtlasProgress = Signal(int, int)
    sigPhase = Signal(str)

    def __init__(self, parent) -> None:
        super().__init__(parent)
        self.asked = []

    def request_atlas(self, request) -> None:
        self.asked.append(request)


class FakeApp(QObject):
    sigModelLoaded = Signal(object, object)
    sigResult = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.worker = FakeWorker(self)
        self.jobs = FakeJobs(self)
        self.worker_thread = SimpleNamespace(concept_jobs=lambda: self.jobs)
        self.model = SimpleNamespace(request=ModelRequest("demo"), source="demo")
        self.phase = ""
        self.notices, self.cancels = [], 0

    def ticked(self):
        return ["conv1"]

    def usable_device(self) -> str:
        return "cpu"

    def notify(self, level, text, **_kw) -> None:
        self.notices.append((level, text))

    def cancel(self) -> None:
        self.cancels += 1


class FakeSettings:
    def __init__(self) -> None:
        self.values = {}

    def value(self, key, default=None):
        return self.values.get(key, default)

    def setValue(self, key, value) -> None:
        self.values[key] = value


class OpenedAtlas:
    atlas = {"skipped": [], "model": "demo", "images": 3}
    out_dir = "/tmp/atlas"
    data = "/tmp/data"

    def layers(self):
        return ["conv1"]

    def not_of(self, _model):
        return None


def atlas_job():
    app = FakeApp()
    state = AtlasState(app, app.worker)
    return app, state, SimpleNamespace(
        build=lambda: state.build("/tmp/data", "/tmp/atlas", top=3, batch=1),
        stage="Atlas: 1 of 3 images (2.0/s, 1 s left; Esc cancels)",
        progress=app.worker.sigAtlasProgress.emit,
        done=lambda: app.worker.sigAnswer.emit("atlas", 0, OpenedAtlas()),
        ended=lambda failure: state.failed(failure),  # how endings.on_failed hands the state an atlas failure
        cancel_asked=lambda: app.cancels)


def concepts_job():
    app = FakeApp()
    state = ConceptsState(app, FakeSettings())
    return app, state, SimpleNamespace(
        build=lambda: state.build("/tmp/data", "relu3", 4, "nmf", None, "/tmp/concepts"),
        stage="Concepts: the layer over the images 1 of 3 images",
        progress=app.jobs.sigProgress.emit,
        done=lambda: app.jobs.sigAnswer.emit("build", 0, "/tmp/concepts"),
        ended=lambda failure: app.jobs.sigAnswer.emit("build", 0, failure),
        cancel_asked=lambda: app.jobs.cancelled)


def story(make) -> list:
    """What one state goes through and says for the same events: a build queued behind a run, its own stage and
    progress, done; a second build cancelled; a third failed; and what Cancel asks of the worker."""
    app, state, job = make()
    heard = []
    state.sigBuilding.connect(lambda on: heard.append(("building", on)))
    state.sigBuildText.connect(lambda text: heard.append(("text", text)))
    state.sigProgress.connect(lambda done, total: heard.append(("progress", done, total)))
    seen = [state.build_phase]

    def mark(label):
        seen.append((label, state.build_phase, state.building))

    state.cancel()
    mark("cancel while idle")
    app.phase = "Running the model"
    assert job.build()
    mark("asked")
    app.worker.sigPhase.emit("Statistics")  # the worker's job in hand goes on
    mark("another phase")
    app.worker.sigPhase.emit(job.stage)
    mark("its stage")
    app.worker.sigPhase.emit("Statistics")  # said only while queued
    job.progress(2, 3)
    mark("progress")
    state.cancel()
    mark("cancel while building")
    job.done()
    mark("done")
    app.phase = ""
    assert job.build()
    job.ended(Failure("Cancelled after 1 of 3 images.", what="atlas", cancelled=True))
    mark("cancelled")
    assert job.build()
    job.progress(1, 3)
    job.ended(Failure("the folder is gone", what="atlas"))
    mark("failed")
    job.progress(3, 3)  # a late progress changes nothing
    mark("late progress")
    stage = job.stage
    heard = [("text", "STAGE") if h == ("text", stage) else h for h in heard]
    return seen, heard, job.cancel_asked()


def test_the_atlas_and_the_concepts_go_through_the_same_phases(qapp):
    atlas, concepts = story(atlas_job), story(concepts_job)
    assert atlas == concepts
    seen, heard, cancels = atlas
    assert seen == ["idle", ("cancel while idle", "idle", False), ("asked", "queued", True),
                    ("another phase", "queued", True), ("its stage", "running", True),
                    ("progress", "running", True), ("cancel while building", "running", True),
                    ("done", "done", False), ("cancelled", "cancelled", False), ("failed", "failed", False),
                    ("late progress", "failed", False)]
    assert {p for _label, p, _b in seen[1:]} <= set(PHASES)
    assert heard == [("building", True), ("text", queued_text("Running the model")),
                     ("text", queued_text("Statistics")), ("text", "STAGE"), ("progress", 2, 3), ("building", False),
                     ("building", True), ("text", "Starting…"), ("building", False),
                     ("building", True), ("text", "Starting…"), ("progress", 1, 3), ("building", False),
                     ("progress", 3, 3)]
    assert cancels == 1  # Cancel reaches the worker only while a build runs


def test_the_queued_text_says_what_the_build_waits_for():
    assert queued_text("") == "Starting…"
    assert queued_text("Running demo") == "Queued behind “Running demo”: the build starts when that ends."
