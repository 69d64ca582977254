"""Part of the worker (`Worker`): the trust card of a map ("Check these maps"), made on the worker thread with the
core's `card_on` (as a server's engine makes it) and sent back as a plain record (sigAnswer("check", run id,
TrustCard)); its progress is the status line's phase ("Checking the maps (gradcam): MPRT step 3 of 9 (Esc
cancels)"); Esc stops it (a cancelled Failure, what "checks"); any other failure is a Failure whose one line the
banner says."""

from __future__ import annotations

from inspector.core.records.failure import failure


class TrustJobs:
    """Mixed into Worker (which has `bench`, `_cancel`, `_put`, `_wake` and the signals)."""

    def request_check(self, request) -> str:
        """Make the trust card of one map (a TrustRequest); latest wins in its lane."""
        key = self._put("check", request)
        self._wake.emit()
        return key

    def _check_maps(self, request) -> None:
        from inspector.core.attribution.sanity.served import card_on

        def say(words: str) -> None:
            self._sigPhase.emit(f"Checking the maps ({request.method}): {words} (Esc cancels)")

        try:
            card = card_on(self.bench, request, self._cancel.is_set, say)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a message; the maps stay
            self._sigFailed.emit(failure(exc, "checks", request.run_id))
            return
        self._sigAnswer.emit("check", request.run_id, card)
