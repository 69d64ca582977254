"""Issue 13: a video file as a live input: frames decoded off the GUI thread, latest wins (frames that
arrive during a run are dropped, never queued), frames per second shown, pause, step and snapshot."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from inspector.core.inputs.video import write_video

N = 24


def make_clip(path, n=N, fps=25):
    """Frame i is a flat grey 5 + 6 i: the tiny model's input (picture / 255) says which frame ran."""
    return str(write_video(path, [np.full((32, 32, 3), 5 + 6 * i, np.uint8) for i in range(n)], fps=fps))


def frame_of(outcome) -> int:
    return int(round((outcome.result.input.mean() * 255 - 5) / 6))


def weak_refs_to(obj) -> int:
    import gc
    import weakref

    return sum(1 for r in gc.get_objects() if type(r) is weakref.ref and r() is obj)


def collect(window):
    shown = []
    window.sigResultShown.connect(lambda o: shown.append((o.run_id, frame_of(o), None)))
    return shown


def test_a_video_plays_through_the_panels_frame_after_frame(ui, qtbot, window, tmp_path, settings, image_file):
    clip = make_clip(tmp_path / "clip.mp4")
    decoders = []
    shown = collect(window)
    refs_before = weak_refs_to(window.state)
    window.state.live.open(clip, pace="demand")  # as fast as the panels are drawn: no frame dropped
    qtbot.waitUntil(lambda: window.state.live.playing and window.state.live.feed.ended and
                    not window.state.live.busy and len(shown) == N, timeout=60_000)
    decoders = [t.name for t in threading.enumerate()]
    assert [frame for _run, frame, _index in shown] == list(range(N))  # each frame's own pixels ran
    status = window.state.live.status()
    assert status["dropped"] == 0 and status["fps"] > 0
    assert "frames/s drawn, 0 dropped" in window.run_status.live.text()
    assert window.live_bar.isVisible() and window.live_bar.label.text() == f"clip.mp4: frame {N} of {N} (ended)"
    assert f"End of clip.mp4 ({N} frames)" in window.banner.text()
    settings.sync()
    assert settings.value("input") == image_file  # a frame is not an input to come back to
    assert ("input", clip) in window.state.store.recent()  # issue 41, item 13: File > Open recent offers the video
    assert "inspector-video" not in decoders  # the decoding thread finished at the end
    assert weak_refs_to(window.state) - refs_before < 5  # nothing is left behind per frame (was one each)



def test_while_a_video_plays_the_users_zoom_stays_and_runs_are_not_announced(ui, qtbot, window, tmp_path):
    """Each frame redraws the panels, not the view the user chose, and not the status bar's busy bar
    (showing, hiding and relayouting it every frame took GUI time from the panels)."""
    clip = make_clip(tmp_path / "clip.mp4")
    panel, zoom = window.activation_panel, window.activation_panel.zoom
    panel.view.setRange(xRange=(2, 9), yRange=(3, 8), padding=0)
    zoom.view.setRange(xRange=(1, 4), yRange=(1, 4), padding=0)
    chosen, zoomed = panel.view.viewRange(), zoom.view.viewRange()
    seen = []
    playing = lambda: not (window.state.live.feed.ended or window.state.live.feed.paused)  # noqa: E731
    window.sigResultShown.connect(lambda _o: seen.append((playing(), window.run_status.busy.isVisible(),
                                                          window.run_status.phase_label.text())))
    window.state.live.open(clip, pace="demand")
    qtbot.waitUntil(lambda: window.state.live.feed.ended and not window.state.live.busy and len(seen) == N,
                    timeout=60_000)
    for view, before in ((panel.view, chosen), (zoom.view, zoomed)):  # the live bar took some height: the
        for now, was in zip(view.viewRange(), before):                # locked aspect keeps centre, not spans
            assert np.mean(now) == pytest.approx(np.mean(was)) and np.ptp(now) < 1.4 * np.ptp(was)
    during = [shown for play, *shown in seen[1:] if play]  # (the first frame starts the video)
    assert len(during) > N // 2 and during == [[False, ""]] * len(during)


def test_frames_arriving_during_a_run_are_dropped_not_queued(ui, qtbot, open_window, slow_source, image_file,
                                                             tmp_path):
    """A 0.8 s model on a 25 frames/s video of 1.6 s: about one frame in twenty runs, each the newest."""
    window = open_window(slow_source, image_file, ticks={"conv"})
    clip = make_clip(tmp_path / "clip.mp4", n=40)
    shown = collect(window)
    pending = []
    window.state.worker.sigBusy.connect(lambda _b: pending.append(window.state.worker.pending()))
    window.state.live.open(clip)
    qtbot.waitUntil(lambda: window.state.live.feed.ended and not window.state.live.busy, timeout=60_000)
    feed = window.state.live.feed
    runs = len(shown)
    assert 1 <= runs <= 10 and feed.decoded == 40 and feed.dropped >= 40 - 10 - 1  # ~3 runs on an idle machine
    assert max(pending) <= 1  # never more than one request waiting
    frames = [frame for _run, frame, _index in shown]
    assert frames == sorted(frames) and len(set(frames)) == len(frames)  # each the newest, never one again
    # every decoded frame was either run or dropped in the feed (the last one may be waiting)
    waiting = 1 if feed.take() is not None else 0
    assert runs + feed.dropped + waiting == 40


def test_pause_step_and_snapshot(ui, qtbot, window, tmp_path):
    clip = make_clip(tmp_path / "clip.mp4")
    shown = collect(window)
    window.state.live.open(clip, pace="demand")
    qtbot.waitUntil(lambda: len(shown) >= 3, timeout=30_000)
    assert window.hook_log.toPlainText().startswith("While the video plays the hook log is not updated")
    window.live_bar.pause_button.click()
    assert window.state.live.feed.paused and window.live_bar.pause_button.text() == "Play"
    qtbot.wait(300)
    qtbot.waitUntil(lambda: not window.state.live.busy)
    qtbot.wait(200)
    before = window.state.live.shown_frame.index
    count = len(shown)
    qtbot.wait(300)
    assert len(shown) <= count + 1  # paused: at most the one frame that was already decoded
    settled = window.state.live.shown_frame.index
    window.live_bar.step_button.click()
    qtbot.waitUntil(lambda: window.state.live.shown_frame.index == settled + 1, timeout=10_000)
    qtbot.waitUntil(lambda: window.live_bar.label.text() == f"clip.mp4: frame {settled + 2} of {N} (paused)")
    assert "fired" in window.hook_log.toPlainText()  # paused: the hooks of the frame on screen
    assert settled >= before
    snapshot_frame = window.state.outcome.result.input.copy()
    window.live_bar.snapshot_button.click()
    outcome = ui.expect_result(qtbot, window)
    assert not window.state.live.playing and not window.live_bar.isVisible()
    # the frame the bar showed (frame settled + 2, counted from 1), saved beside the video under a readable name
    assert window.state.input == str(tmp_path / f"clip-frame{settled + 2}.png")
    assert f"Snapshot of frame {settled + 2} saved as clip-frame{settled + 2}.png (beside clip.mp4)" in \
        window.banner.text()
    np.testing.assert_array_equal(outcome.result.input, snapshot_frame)  # PNG: the very same pixels


def test_stop_brings_back_the_image_and_a_bad_video_says_so(ui, qtbot, window, tmp_path, image_file):
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"no video in here")
    window.state.set_input(str(bad))  # a typed or dropped video file opens as live input
    qtbot.waitUntil(lambda: "Cannot open bad.mp4 as a video" in window.banner.text(), timeout=10_000)
    window.live_bar.stop_button.click()
    outcome = ui.expect_result(qtbot, window)
    assert window.state.input == image_file and not window.state.live.playing
    assert outcome.result.input.shape == (1, 3, 32, 32)
