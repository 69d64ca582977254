"""The server's files, for the window on a remote engine (`RemoteWorker`): a folder of its data root listed (the
protocol's `list` request, answered at once beside the engine's work), in one of two lanes of its own:

    files         (a chooser's folder: `show` "images" or "all") result -> sigAnswer("files", 0, the listing)
    files-nested  (a folder input: every image below a folder, `show` "nested") result ->
                  sigAnswer("files-nested", 0, the listing)

The listing is the server's dict (`inspector.remote.listing`: root, path, parent, sep, entries, more, outside); a
folder it may not list, a lost connection or a server without `list` comes as sigAnswer(lane, 0, Failure) in one
line. Latest wins in each lane: a listing asked while one is in flight waits, and a newer one replaces it.
"""

from __future__ import annotations

#: The lanes the server's listings go in, after the concept jobs'.
FILE_LANES = ("files", "files-nested")


class RemoteFiles:
    """Mixed into RemoteWorker (which has `_put`)."""

    def request_listing(self, path: str, show: str = "images") -> str:
        """List the server's folder `path` (`show`: "images", "all", or "nested": every image below it, in the
        lane "files-nested"); its answer is sigAnswer(lane, 0, listing or Failure)."""
        return self._put("files-nested" if show == "nested" else "files", {"path": str(path), "show": show})
