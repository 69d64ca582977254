"""The server's files, for the window on a remote engine (`RemoteWorker`): a folder of its data root listed (the
protocol's `list` request), or a finished evaluation's summary read there (`summary`), both answered at once beside
the engine's work, each in a lane of its own:

    files               (a chooser's folder: `show` "images" or "all") result -> sigAnswer("files", 0, the listing)
    files-nested        (a folder input: every image below a folder, `show` "nested") result ->
                        sigAnswer("files-nested", 0, the listing)
    evaluation-summary  (Open evaluation…: a folder there) result -> sigAnswer("evaluation-summary", 0, its
                        summary.json's content)

The listing is the server's dict (`inspector.remote.listing`: root, path, parent, sep, entries, more, outside); a
folder it may not list or read, a lost connection or a server without the request comes as
sigAnswer(lane, 0, Failure) in one line. Latest wins in each lane: a request asked while one is in flight waits, and
a newer one replaces it.
"""

from __future__ import annotations

#: The lanes of the server's files (after the concept jobs'), each with the request kind it is served with.
FILE_KINDS = {"files": "list", "files-nested": "list", "evaluation-summary": "summary"}
FILE_LANES = tuple(FILE_KINDS)


class RemoteFiles:
    """Mixed into RemoteWorker (which has `_put`)."""

    def request_listing(self, path: str, show: str = "images") -> str:
        """List the server's folder `path` (`show`: "images", "all", or "nested": every image below it, in the
        lane "files-nested"); its answer is sigAnswer(lane, 0, listing or Failure)."""
        return self._put("files-nested" if show == "nested" else "files", {"path": str(path), "show": show})

    def request_summary(self, folder: str) -> str:
        """The summary of the finished evaluation in the server's `folder` (Open evaluation…); its answer is
        sigAnswer("evaluation-summary", 0, summary.json's content or Failure)."""
        return self._put("evaluation-summary", {"path": str(folder)})
