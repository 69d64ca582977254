"""One long-lived QThread with its worker: started once (never again after `stop`), stopped by asking the worker to
halt, quitting the thread's event loop and joining it. The face both transports give the window (`WorkerThread` in
this process, `RemoteWorkerThread` for a remote engine); each says how its worker halts."""

from __future__ import annotations

from PySide6.QtCore import QObject, QThread


class OneThread:
    def __init__(self, worker: QObject, entry: str, name: str, start: bool = True) -> None:
        self.thread = QThread()
        self.thread.setObjectName(name)
        self.worker = worker
        self.worker.moveToThread(self.thread)
        self.thread.started.connect(getattr(self.worker, entry))
        self._started = False
        if start:
            self.start()

    def start(self) -> None:
        """Start the thread; a second call, or one after stop(), does nothing."""
        if not self._started:
            self._started = True
            self.thread.start()

    def stop(self, timeout_ms: int = 30000) -> bool:
        """Halt the worker and join its thread; whether it ended within `timeout_ms`."""
        self._started = True  # never (re)started after this
        if not self.thread.isRunning():
            self.stopped()
            return True
        self.halt()
        self.thread.quit()
        ended = self.thread.wait(timeout_ms)
        if ended:
            self.stopped()
        return ended

    def halt(self) -> None:
        """Ask the worker to stop what it does (on the GUI thread, while its thread runs)."""
        raise NotImplementedError

    def stopped(self) -> None:
        """What goes with the thread once it has ended."""
