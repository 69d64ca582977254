"""The engine protocol's mailbox (`inspector.protocol.lanes.Lanes`): one waiting request per lane, latest wins,
a model's load drops the waiting run, served in the lanes' order, cancelled by id, safe across threads."""

from __future__ import annotations

import threading

import pytest

from inspector.protocol.kinds import ALSO_DROPS
from inspector.protocol.lanes import Lanes

ORDER = ("catalogue", "model", "run", "finish", "attribution")


def test_put_replaces_the_waiting_request_of_its_lane_and_returns_it():
    lanes = Lanes(ORDER)
    assert lanes.put("run", "r1", "first") == []
    assert lanes.put("run", "r2", "second") == [("r1", "first")]
    assert lanes.put("attribution", "a1", "map") == []  # another lane: nothing replaced
    assert len(lanes) == 2
    assert lanes.take_all() == [("run", "r2", "second"), ("attribution", "a1", "map")]


def test_a_models_load_drops_the_run_waiting_for_the_model_before():
    assert ALSO_DROPS["model"] == ("run",)
    lanes = Lanes(ORDER)
    lanes.put("run", "r1", "run of the model before")
    lanes.put("attribution", "a1", "map")
    assert lanes.put("model", "m1", "load") == [("r1", "run of the model before")]
    assert not lanes.waiting("run") and lanes.waiting("model") and lanes.waiting("attribution")
    lanes.put("run", "r2", "run of the new model")  # a run after the load waits beside it
    assert lanes.put("model", "m2", "another load") == [("m1", "load"), ("r2", "run of the new model")]
    assert lanes.take_all() == [("model", "m2", "another load"), ("attribution", "a1", "map")]


def test_a_run_drops_no_load_and_other_drops_can_be_given():
    lanes = Lanes(ORDER)
    lanes.put("model", "m1", "load")
    assert lanes.put("run", "r1", "run") == []
    assert [lane for lane, _, _ in lanes.take_all()] == ["model", "run"]
    plain = Lanes(ORDER, also_drops={})
    plain.put("run", "r1", "run")
    assert plain.put("model", "m1", "load") == []  # no rule: the run stays
    assert len(plain) == 2


def test_take_all_serves_in_the_lanes_order_whatever_the_order_put_and_empties_them():
    lanes = Lanes(ORDER, also_drops={})  # (the load put after the run would drop it)
    for lane in reversed(ORDER):
        lanes.put(lane, f"{lane}-id", lane.upper())
    assert lanes.take_all() == [(lane, f"{lane}-id", lane.upper()) for lane in ORDER]
    assert len(lanes) == 0 and lanes.take_all() == []


def test_cancel_by_id_takes_only_that_request_away():
    lanes = Lanes(ORDER)
    lanes.put("run", "r1", "run")
    lanes.put("attribution", "a1", "map")
    assert lanes.cancel("a1") == "map"
    assert lanes.cancel("a1") is None  # gone already
    assert lanes.cancel("nobody") is None
    lanes.put("run", "r2", "newer run")
    assert lanes.cancel("r1") is None  # replaced: no longer waiting under that id
    assert lanes.take_all() == [("run", "r2", "newer run")]


def test_drop_takes_a_lanes_waiting_request_away():
    lanes = Lanes(ORDER)
    assert lanes.drop("run") is None
    lanes.put("run", "r1", "run")
    assert lanes.drop("run") == ("r1", "run")
    assert not lanes.waiting("run")


def test_an_unknown_lane_is_refused():
    with pytest.raises(ValueError, match="no lane 'video'"):
        Lanes(ORDER).put("video", "v1", "frame")


def test_two_threads_putting_at_once_keep_one_request_per_lane_and_lose_none():
    """Two real threads put into two lanes (and into one shared lane) while a third takes: every request is
    either replaced (returned by put), taken, or left waiting; none twice, none lost; at most one waits per lane."""
    lanes = Lanes(ORDER, also_drops={})
    n = 5000
    start = threading.Barrier(3, timeout=30)
    replaced: dict[str, list] = {"a": [], "b": []}
    taken: list = []
    errors: list = []

    def put(name: str, lane: str) -> None:
        try:
            start.wait()
            for i in range(n):
                replaced[name] += lanes.put(lane if i % 2 else "run", f"{name}{i}", (name, i))
        except Exception as exc:  # noqa: BLE001 - said below
            errors.append(exc)

    def take() -> None:
        try:
            start.wait()
            while not done.is_set():
                batch = lanes.take_all()
                assert len({lane for lane, _, _ in batch}) == len(batch)  # one per lane
                taken.extend(batch)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    done = threading.Event()
    putters = [threading.Thread(target=put, args=("a", "attribution")),
               threading.Thread(target=put, args=("b", "finish"))]
    taker = threading.Thread(target=take)
    for t in (*putters, taker):
        t.start()
    for t in putters:
        t.join(60)
    done.set()
    taker.join(60)
    assert not any(t.is_alive() for t in (*putters, taker)), "a thread is stuck"
    assert not errors, errors
    left = lanes.take_all()
    seen = [request for _key, request in replaced["a"] + replaced["b"]] + [r for _l, _k, r in taken + left]
    assert len(seen) == len(set(seen)) == 2 * n  # each request accounted for exactly once
    assert len(left) <= 3  # run, attribution, finish: at most one waiting in each


def test_waiting_and_len_are_bounded_by_the_lanes():
    lanes = Lanes(ORDER)
    for i in range(1000):
        lanes.put(ORDER[i % len(ORDER)], str(i), i)
    assert len(lanes) == len(ORDER)  # however many came, one per lane waits
