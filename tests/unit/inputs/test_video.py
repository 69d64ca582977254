"""Video files (and cameras) through PyAV: frames back as written, clear errors for what cannot be opened."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.common.errors import InputError
from inspector.core.inputs.video import VideoReader, is_video, write_video


def greys(n):
    return [np.full((24, 32, 3), 10 + 20 * i, np.uint8) for i in range(n)]


def test_a_written_video_reads_back_frame_by_frame(tmp_path):
    path = write_video(tmp_path / "clip.mp4", greys(8), fps=10)
    with VideoReader(str(path)) as reader:
        assert reader.fps == 10 and reader.size == (32, 24) and reader.frame_count == 8
        frames = list(reader.frames())
    assert [f.index for f in frames] == list(range(8))
    np.testing.assert_allclose([f.time_s for f in frames], np.arange(8) / 10, atol=1e-6)
    assert all(f.rgb.shape == (24, 32, 3) and f.rgb.dtype == np.uint8 for f in frames)
    # lossy MPEG-4 on flat greys: each frame within 3 levels of what was written
    np.testing.assert_allclose([f.rgb.mean() for f in frames], [10 + 20 * i for i in range(8)], atol=3)


def test_what_cannot_be_opened_says_so(tmp_path):
    with pytest.raises(InputError, match="Video file not found"):
        VideoReader(str(tmp_path / "missing.mp4"))
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"this is no video")
    with pytest.raises(InputError, match="Cannot open bad.mp4 as a video"):
        VideoReader(str(bad))
    with pytest.raises(InputError, match="Cannot open camera 97"):
        VideoReader("camera:97")  # no such device on any test machine


def test_which_sources_are_videos():
    assert is_video("a/b/clip.MP4") and is_video("camera:0") and is_video("x.webm")
    assert not is_video("image.png") and not is_video("sample:star")
