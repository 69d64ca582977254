"""The message kinds: what a client asks (each in a lane) and what the engine answers.

"Latest wins" is one rule, per lane: a request waiting in a lane is replaced by the next one in that lane (it
ends `cancelled`), and a model's load also drops the run waiting for the model before. Cancel is by id.
"""

from __future__ import annotations

#: A request's kind -> its lane and the record its body is.
REQUESTS: dict[str, tuple[str, str | None]] = {
    "load": ("model", "ModelRequest"),
    "run": ("run", "RunRequest"),
    "capture": ("run", "RunRequest"),  # a headless capture: the whole result, every array
    "attribute": ("attribution", "AttributionRequest"),
    "atlas": ("job", "AtlasRequest"),
    "graph": ("graph", "GraphRequest"),  # the graph of the loaded model on an input, laid out: a GraphRecorded
    "values": ("values", "GraphValuesRequest"),  # a run's values on a recorded graph: GraphValues, GraphComparison
    "concepts": ("concepts", "ConceptsRequest"),  # open a dictionary, read an image's concepts, a map, a page
    "learn": ("job", "BuildConceptsRequest"),  # learn a concept dictionary over a folder: its folder, when done
    "checks": ("checks", "TrustRequest"),  # a map's trust card ("Check these maps"): a TrustCard
    "evaluate": ("job", "EvaluationRequest"),  # Evaluate… over a folder: an EvaluationDone, when done
    "catalogue": ("catalogue", None),  # body: null; the model sources the server offers, a list of names
    "devices": ("info", None),
    "arrays": ("info", None),  # body: {"run": a run's run_id, "names": captures it held}: the last run's arrays
    "list": ("info", None),  # body: {"path": a folder, "show": images|all|nested}: its entries in the data root
    "summary": ("info", None),  # body: {"path": an evaluation's folder in the data root}: its summary.json's content
    "cancel": ("control", None),  # body: {"id": the request to stop}
    "drawn": ("control", None),  # body: the id of a run whose panels the client has drawn from its partial
}

#: An event's kind -> what its body holds.
EVENTS: dict[str, str] = {
    "hello": "the server's protocol version, devices and limits (the first message of a connection)",
    "accepted": "the request's lane: it is queued",
    "progress": "done, total and rate (per second) of the request's work (and its stage, for a job in stages)",
    "partial": "a part of the result (a value), more to come",
    "result": "the result (a value)",
    "failure": "a Failure record: what went wrong, for people",
    "cancelled": "the request was stopped or replaced",
    "error": "a message that could not be read: one sentence",
}

#: How long a run whose `partial` was sent waits for its client's `drawn` before the other layers' statistics
#: start (they would take the cores the client's decoding and drawing need); the app's own worker waits as long for
#: its panels. A client that never says `drawn` gets every statistic this much later.
DRAWN_WAIT_S = 0.5

#: Requests a lane's new request drops, besides its own lane's waiting one.
ALSO_DROPS: dict[str, tuple[str, ...]] = {"model": ("run",)}


def lane(kind: str) -> str:
    return REQUESTS[kind][0]
