"""The window's engine on another machine: `RemoteWorker`, the same face as `Worker`, over `network-inspector serve`.

The GUI thread puts requests into the same lanes as the in-process worker (`inspector.protocol.lanes`, latest
wins) and returns at once. One thread of its own (`RemoteWorkerThread`, a QThread) owns the `EngineClient`: it
connects, sends each lane's next request when that lane has none in flight (a run waits for a load in flight,
and is dropped when that load fails), hears the events of every request in flight (`remote_reader` reads them),
and turns them into the worker's signals:

    load       result -> sigLoaded(ModelInfo); progress -> sigProgress (bytes of a download)
    run        partial -> sigResult (the outcome as run), and `drawn` once its panels are (`remote_control`);
               result -> sigStatsUpdate (every statistic and the diagnostics), or sigResult when no partial came; a newer run or load waiting stops the statistics
               (as in process: F5, `request_finish`, asks for them again: the server has no request for the
               rest of a result's statistics, so the run is sent again as it was asked)
    attribute  result -> sigAnswer("attribution", run id, Attribution)
    checks     a map's trust card, and `evaluate` (Evaluate… over a folder in the data root): see `remote_trust`
    atlas      (open, build over a folder in the server's data root, a channel's pictures) result ->
               sigAnswer("atlas" | "pictures", run id, OpenedAtlas | TopPictures); a build's progress ->
               sigAtlasProgress
    graph      result (a GraphRecorded: the graph recorded and laid out on the engine) -> sigAnswer("graph", run id,
               GraphDrawn), its GraphLayout made here from the graph (the next views are laid out on the GUI's
               layout thread, as in process); a failure or cancel -> sigAnswer("graph", run id, Failure)
    values     result -> sigAnswer("values", run id, GraphValues | GraphComparison); a failure or cancel ->
               sigAnswer("values", run id, Failure)
    arrays     (only what is seen crosses: a run's result carries the shown layer's arrays) the arrays of a layer
               shown later, `request_arrays` -> sigAnswer("arrays", run id, {name: array}, or a Failure)
    catalogue  result (the model sources the server offers) -> sigAnswer("catalogue", 0, names)
    list       a folder of the server's data root, for the choosers and a folder input: see `remote_files`
    concepts   the concept jobs and a concepts build (`learn`): see `remote_concepts`
    failure    -> sigFailed(the engine's Failure record); cancelled -> a cancelled Failure (as in process)

A connection that cannot be made, or is lost, is one Failure
("engine"): the window keeps what it shows; each later request is answered with that line. Only plain records
cross the threads; no Qt object is touched off its thread (the signals are heard on the GUI thread).
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import replace

from PySide6.QtCore import Signal, Slot

from inspector.core.records.failure import Failure
from inspector.core.records.requests import ModelRequest, RunRequest
from inspector.protocol.lanes import Lanes

from ..common.gui_thread_signals import HeardOnGuiThread
from .remote_concepts import CONCEPT_LANES, RemoteConceptJobs, RemoteConcepts, run_id_of
from .remote_control import RemoteControl
from .remote_files import FILE_LANES, RemoteFiles
from .remote_trust import EVALUATION_LANE, RemoteEvaluationJobs, RemoteTrust
from .remote_lanes import ANSWERED, GROUPS, PHASES, REMOTE_LANES, SERVED, Flight, failure_of, stats_update
from .remote_reader import EventReader
from .signals import EngineSignals
from .thread import OneThread

#: The longest the engine's thread waits when nothing happens (s): a request put, a cancel and an event read each
#: wake it at once (`remote_reader`).
IDLE_S = 1.0
#: How long a connection may take to open and say hello, and a message's next frame to come (s): a window closed
#: while an engine does not answer waits for no longer.
CONNECT_S = 15.0


class RemoteWorker(RemoteControl, RemoteConcepts, RemoteFiles, RemoteTrust, HeardOnGuiThread, EngineSignals):
    """The Worker's public methods and signals (see `inspector.gui.worker.local.Worker`), served by `url`'s engine.

    `where` says where the engine is ("engine ws://host:port · cpu"); `hello` is the server's hello (None until
    connected); `lost` the one line a lost or refused connection came to ("" while none)."""

    _sigWhere = Signal(str)
    _sigConceptAnswer = Signal(str, int, object)
    _sigConceptProgress = Signal(int, int)
    _sigEvaluationAnswer = Signal(int, object)
    _sigEvaluationProgress = Signal(int, int)

    def __init__(self, url: str, token: str | None = None, token_file=None, timeout: float = CONNECT_S) -> None:
        super().__init__()
        self.hear_on_gui_thread()
        self.url, self.timeout = url, timeout
        self._token, self._token_file = token, token_file
        self.bench = None  # no engine here (the concept jobs see none)
        self.hello: dict | None = None
        self.lost = ""
        self.runs_done = 0
        self._lock = threading.Lock()
        self._lanes = Lanes(REMOTE_LANES)
        self._ids = itertools.count(1)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._cancels: list[str] = []  # the app's ids to stop (in flight), sent by the engine's thread
        self._cancel_all = False  # Esc: stop everything in flight
        self._drawn = False  # the GUI has drawn the last partial's panels: said to the engine by its thread
        self._flights: dict[str, Flight] = {}  # the server's id -> what it is; only on the engine's thread
        self._unfinished = None  # (outcome as run, its RunRequest) whose statistics were stopped
        self._arrays_ask = None  # (run id, names): the held arrays asked for last (latest wins)

    # -- called from the GUI thread ----------------------------------------------------------
    def where(self) -> str:
        device = (self.hello or {}).get("device")
        return f"engine {self.url}" + (f" · {device}" if device else "") + (" · lost" if self.lost else "")

    def _put(self, lane: str, request) -> str:
        key = f"{lane}-{next(self._ids)}"
        self._lanes.put(lane, key, request)
        self._wake.set()
        return key

    def request_load(self, request: ModelRequest, device: str = "cpu") -> str:
        return self._put("model", (request, device))

    def request_run(self, request: RunRequest) -> str:
        return self._put("run", request)

    def request_attribution(self, request) -> str:
        return self._put("attribution", request)

    def request_atlas(self, request) -> str:
        return self._put("pictures" if request.kind == "pictures" else "atlas", request)

    def request_graph(self, request) -> str:
        return self._put("graph", request)

    def request_graph_values(self, request) -> str:
        return self._put("values", request)

    def request_finish(self, run_id: int) -> str:
        return self._put("finish", run_id)

    def request_catalogue(self) -> str:
        return self._put("catalogue", True)

    def request_arrays(self, run_id: int, names) -> None:
        """The arrays `names` of run `run_id` the engine held (`RunResult.held`; a baseline's as `baseline/NAME`),
        once that run's statistics are done: sigAnswer("arrays", run_id, {name: array}) (a Failure when the engine
        no longer holds them). Latest wins."""
        with self._lock:
            self._arrays_ask = (int(run_id), tuple(names))
        self._wake.set()

    def pending(self) -> int:
        return int(self._lanes.waiting("run")) + int(self._lanes.waiting("model"))

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    # -- on the engine's thread --------------------------------------------------------------
    @Slot()
    def serve(self) -> None:
        """Connect, then serve until stop(): the thread's whole life."""
        client = self._connect()
        reader = None if client is None else EventReader(client, self._wake)
        try:
            while not self._stop.is_set():
                if client is None:
                    self._answer_unconnected()
                    self._wake.wait(0.2)
                    self._wake.clear()
                    continue
                try:
                    self._turn(client, reader)
                except Exception as exc:  # noqa: BLE001 - a lost connection, or a message that cannot be read
                    self._lose(exc)
                    self._close(client)
                    client = None
        finally:
            self._close(client)
            if reader is not None:
                reader.join()

    def _connect(self):
        from inspector.remote.client import EngineClient

        self._sigPhase.emit(f"Connecting to {self.url}")
        try:
            client = EngineClient(self.url, self._token, token_file=self._token_file, timeout=self.timeout)
        except Exception as exc:  # noqa: BLE001 - EngineError, no token (ServerSetupError), a bad URL
            self._lose(exc)
            return None
        finally:
            self._sigPhase.emit("")
        self.hello = client.hello
        devices = [tuple(d) for d in client.hello.get("devices", [])]
        self._sigWhere.emit(self.where())
        self._sigEngineReady.emit(devices)
        return client

    @staticmethod
    def _close(client) -> None:
        if client is not None:
            try:
                client.close()
            except Exception:  # noqa: BLE001, S110 - closing a connection already gone
                pass

    def _lose(self, exc: BaseException) -> None:
        said = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        self.lost = said if self.hello is None else f"Lost the engine at {self.url}: {said}"
        with self._lock:
            flights, self._flights = self._flights, {}
        self._sigWhere.emit(self.where())
        self._sigFailed.emit(Failure(self.lost, "engine", type(exc).__name__))
        for flight in flights.values():  # what was in flight ends, so nothing waits for it
            if flight.lane in ANSWERED:
                run_id = run_id_of(flight)
                self._sigAnswer.emit(flight.lane, run_id, Failure(self.lost, SERVED[flight.lane][1], "EngineError",
                                                                  run_id))
            elif flight.lane in CONCEPT_LANES:
                self._concept_failed(flight.lane, flight.request, Failure(self.lost, "concepts", "EngineError",
                                                                          run_id_of(flight)))
            elif flight.lane == EVALUATION_LANE:
                self._evaluation_answer(flight.request, Failure(self.lost, "evaluation", "EngineError",
                                                                run_id_of(flight)))
            elif flight.lane in ("catalogue", "attribution", "check", "model", "run", "atlas", "pictures"):
                self._sigFailed.emit(Failure(self.lost, SERVED[flight.lane][1], "EngineError", run_id_of(flight)))
            elif flight.lane == "arrays":
                self._sigAnswer.emit("arrays", flight.request[0], Failure(self.lost, "run", "EngineError"))
        self._sigPhase.emit("")
        self._sigBusy.emit(False)

    def _answer_unconnected(self) -> None:
        """No engine: every request is answered with the one line, never left waiting."""
        message = self.lost or f"Not connected to the engine at {self.url}."
        with self._lock:
            self._cancel_all, self._cancels = False, []
            ask, self._arrays_ask = self._arrays_ask, None
        if ask is not None:
            self._sigAnswer.emit("arrays", ask[0], Failure(message, "run", "EngineError", ask[0]))
        for lane, _key, request in self._lanes.take_all():
            run_id = getattr(request, "run_id", 0) if lane != "finish" else request
            if lane in CONCEPT_LANES:
                self._concept_failed(lane, request, Failure(message, "concepts", "EngineError", run_id))
            elif lane in ANSWERED:
                self._sigAnswer.emit(lane, run_id, Failure(message, SERVED[lane][1], "EngineError", run_id))
            elif lane == EVALUATION_LANE:
                self._evaluation_answer(request, Failure(message, "evaluation", "EngineError", run_id))
            elif lane == "model" and self.hello is None:  # never connected: the line alone, not a load's failure
                self._sigFailed.emit(Failure(message, "engine", "EngineError"))
            elif lane in SERVED and lane != "finish":
                self._sigFailed.emit(Failure(message, SERVED[lane][1], "EngineError", run_id))

    def _turn(self, client, reader: EventReader) -> None:
        self._send_cancels(client)
        self._send_drawn(client)
        self._send_waiting(client)
        self._wake.wait(IDLE_S)  # a request or cancel put, or an event read (a connection lost too: at once)
        self._wake.clear()
        for message in reader.take():
            self._on_event(message)

    def _send_waiting(self, client) -> None:
        busy = {f.lane for f in self._flights.values()}
        for lane in REMOTE_LANES:
            if lane in busy or (lane == "finish" and "run" in busy) or (lane == "run" and "model" in busy) \
                    or (lane in CONCEPT_LANES and "model" in busy) \
                    or (lane in GROUPS and any(GROUPS.get(other) == GROUPS[lane] for other in busy)):
                continue
            got = self._lanes.drop(lane)
            if got is None:
                continue
            key, request = got
            if lane == "finish":
                unfinished, self._unfinished = self._unfinished, None
                if unfinished is None or unfinished[0].run_id != request or self.pending():
                    continue  # its statistics are done, or a newer result is coming
                request = unfinished  # the run again: its panels' arrays only cross, every statistic with them
            self._send(client, lane, key, request)
            busy.add(lane)
        with self._lock:
            ask = self._arrays_ask if "arrays" not in busy else None
            if ask is not None:
                self._arrays_ask = None
        if ask is not None:
            server_key = client.send("arrays", {"run": ask[0], "names": list(ask[1])})
            with self._lock:
                self._flights[server_key] = Flight("arrays", "arrays", ask)
        # a newer run or load waits: the statistics of the run in flight stop (as `_NewerRequest` in process)
        if self.pending():
            for server_key, flight in list(self._flights.items()):
                if flight.lane in ("run", "finish") and flight.partial is not None and not flight.stopping:
                    self._stop_flight(client, server_key, flight)

    def _send(self, client, lane: str, key: str, request) -> None:
        kind, _what = SERVED[lane]
        phase = PHASES[lane](request)
        if phase is not None:
            self._sigPhase.emit(phase)
        body = request[0] if lane == "model" else request[1] if lane == "finish" else None if lane == "catalogue" \
            else request  # the server puts a model on its own --device
        if not self._busy() and lane not in FILE_LANES:  # (a listing is no work to wait for)
            self._sigBusy.emit(True)
        server_key = client.send(kind, body)
        flight = Flight(lane, key, request)
        if lane == "concepts-build":
            from .concepts import build_progress

            flight.progress = build_progress(self._sigPhase.emit, self._sigConceptProgress.emit)
        with self._lock:
            self._flights[server_key] = flight

    # -- the concept jobs' answers -------------------------------------------------------------
    def _on_event(self, message) -> None:
        flight = self._flights.get(message.id)
        if flight is None or message.kind == "accepted":
            return  # a cancel's answer, or a request already let go
        kind, body = message.kind, message.body
        if kind == "progress":
            self._on_progress(flight, body)
            return
        if kind == "partial":
            flight.partial = body  # (F5's run again: its panels are on screen already)
            if flight.lane == "run":
                self.runs_done += 1
                self._sigResult.emit(body)
                self._sigPhase.emit("Statistics of the other layers (on the engine)")
            return
        with self._lock:
            del self._flights[message.id]
        if flight.lane in CONCEPT_LANES:
            self._on_concept_event(flight, kind, body)
        elif flight.lane == EVALUATION_LANE:
            self._evaluation_answer(flight.request, body if kind == "result" else failure_of(flight, kind, body))
        elif flight.lane == "arrays":  # answered at once, beside the rest: no phase of its own
            self._sigAnswer.emit("arrays", flight.request[0], body if kind in ("result", "failure") else Failure(
                f"The engine did not send the arrays: {body}", "run", "EngineError", flight.request[0]))
            return
        elif flight.lane in ANSWERED and kind != "result":
            self._sigAnswer.emit(flight.lane, run_id_of(flight), failure_of(flight, kind, body))
        elif kind == "result":
            self._on_result(flight, body)
        elif kind == "failure":
            if flight.lane == "model":
                self._lanes.drop("run")  # it was for the model that failed to load (as in process)
            self._sigFailed.emit(body)
        elif kind == "cancelled":
            self._on_cancelled(flight, str(body))
        else:  # an error: the engine could not read the request
            what = SERVED[flight.lane][1]
            self._sigFailed.emit(Failure(f"The engine could not take the request: {body}", what, "EngineError",
                                         run_id_of(flight)))
        if not self._busy():
            self._sigPhase.emit("")
            self._sigBusy.emit(False)

    def _busy(self) -> bool:
        """Something the user waits for (and can cancel) is in flight: not the arrays of a layer shown."""
        return any(f.lane != "arrays" and f.lane not in FILE_LANES for f in self._flights.values())

    def _on_progress(self, flight: Flight, body) -> None:
        done, total = int(body.get("done", 0)), int(body.get("total", 0))
        if flight.lane == "model":
            self._sigProgress.emit(done, total)  # the weights' bytes
        elif flight.lane == "atlas" and total:
            self._sigAtlasProgress.emit(done, total)
            self._sigPhase.emit(f"Atlas: {done} of {total} images (on the engine; Esc cancels)")
        elif flight.lane == "attribution" and total:
            self._sigPhase.emit(f"Attribution ({flight.request.method}) on the engine: {done} of {total} steps")
        elif flight.lane == "concepts-build" and total:
            flight.progress(str(body.get("stage", "")), done, total)
        elif flight.lane in ("check", EVALUATION_LANE):
            self._on_trust_progress(flight, body)

    def _on_result(self, flight: Flight, value) -> None:
        if flight.lane == "model":
            self._sigLoaded.emit(value)
        elif flight.lane == "catalogue":
            self._sigAnswer.emit("catalogue", 0, value)
        elif flight.lane == "run":
            if flight.partial is None:
                self.runs_done += 1
                self._sigResult.emit(value)
            else:
                self._sigStatsUpdate.emit(stats_update(value))
        elif flight.lane == "finish":
            self._sigStatsUpdate.emit(replace(stats_update(value), run_id=flight.request[0].run_id))
        elif flight.lane in ("attribution", "check"):
            self._sigAnswer.emit(flight.lane, flight.request.run_id, value)
        elif flight.lane in ("atlas", "pictures"):
            self._sigAnswer.emit(flight.lane, flight.request.run_id, value)
        elif flight.lane == "graph":
            from .graph import drawn

            self._sigAnswer.emit("graph", flight.request.run_id, drawn(value))
        elif flight.lane == "values":
            self._sigAnswer.emit("values", flight.request.run_id, value)
        elif flight.lane in FILE_LANES:
            self._sigAnswer.emit(flight.lane, 0, value)

    def _on_cancelled(self, flight: Flight, said: str) -> None:
        if flight.lane == "run" and flight.partial is not None:
            self._unfinished = (flight.partial, flight.request)  # F5 (request_finish) asks for them again
            return
        if flight.lane == "finish":
            self._unfinished = flight.request
            return
        what = SERVED[flight.lane][1]
        if flight.lane == "model":
            said = said or "Download cancelled."
        self._sigFailed.emit(Failure(said or "Cancelled.", what, "RunCancelled", run_id_of(flight), True))


class RemoteWorkerThread(OneThread):
    """`WorkerThread`'s face for a remote engine: one QThread whose whole life is `RemoteWorker.serve` (its event
    loop, after serve() returns, ends at once on stop)."""

    def __init__(self, url: str, token_file=None, token: str | None = None, start: bool = True) -> None:
        self.url = url
        super().__init__(RemoteWorker(url, token, token_file), "serve", "inspector-remote-engine", start)

    def concept_jobs(self):
        return RemoteConceptJobs(self.worker)

    def evaluation_jobs(self):
        return RemoteEvaluationJobs(self.worker)

    def halt(self) -> None:
        self.worker.stop()
