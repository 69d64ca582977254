"""Video files and cameras as an input source, decoded with PyAV (FFmpeg's libraries).

Torch-free and Qt-free: `VideoReader` hands out RGB frames as numpy arrays, one at a
time, on whichever thread calls it (the app decodes on a thread of its own). `av` is
imported only here, when a video is opened.

Sources: a video file PyAV can demux (MP4, MKV, AVI, MOV, WebM, ...), or `camera:N`
(Linux: /dev/videoN through V4L2; macOS: AVFoundation device N; Windows: `camera:NAME`,
a DirectShow device name).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from ..common.errors import InputError
from ..storage.paths import regular_file

VIDEO_SUFFIXES = (".mp4", ".m4v", ".mkv", ".avi", ".mov", ".webm", ".mpg", ".mpeg", ".wmv", ".ogv", ".flv")


def is_video(source: str) -> bool:
    """`camera:...` or a file name with a video suffix."""
    return source.startswith("camera:") or source.lower().endswith(VIDEO_SUFFIXES)


@dataclass(frozen=True)
class Frame:
    index: int  # 0 for the first frame decoded
    time_s: float  # presentation time (seconds from the start); for a camera, from when it opened
    rgb: np.ndarray  # (H, W, 3) uint8


def _camera_args(source: str) -> tuple[str, str]:
    """(file, format) PyAV opens a camera with, on this platform."""
    name = source[len("camera:"):] or "0"
    if sys.platform.startswith("linux"):
        return (f"/dev/video{name}" if name.isdigit() else name), "v4l2"
    if sys.platform == "darwin":
        return name, "avfoundation"
    if sys.platform.startswith("win"):
        return f"video={name}", "dshow"
    raise InputError(f"Cameras are not supported on {sys.platform}; open a video file instead.")


class VideoReader:
    """One open video file or camera: `fps`, `size`, `frame_count` (0 when unknown), `frames()`."""

    def __init__(self, source: str) -> None:
        import av

        self.source = source
        self.camera = source.startswith("camera:")
        try:
            if self.camera:
                file, fmt = _camera_args(source)
                self.container = av.open(file, format=fmt)
            else:
                path = regular_file(source, "Video file")
                self.container = av.open(str(path))
        except InputError:
            raise
        except (av.FFmpegError, OSError, ValueError) as exc:
            what = f"camera {source[7:] or '0'}" if self.camera else Path(source).name
            raise InputError(f"Cannot open {what} as a video: {exc}") from None
        if not self.container.streams.video:
            self.container.close()
            raise InputError(f"{Path(source).name} has no video stream.")
        self.stream = self.container.streams.video[0]
        self.stream.thread_type = "AUTO"  # FFmpeg decodes on threads of its own
        rate = self.stream.average_rate or self.stream.guessed_rate
        self.fps = float(rate) if rate else 25.0
        self.size = (self.stream.codec_context.width, self.stream.codec_context.height)
        self.frame_count = int(self.stream.frames or 0)

    def frames(self) -> Iterator[Frame]:
        """Every frame in order, as RGB; an undecodable stream ends with an InputError."""
        import av

        first = None
        try:
            for i, frame in enumerate(self.container.decode(self.stream)):
                t = frame.time if frame.time is not None else i / self.fps
                first = t if first is None else first
                yield Frame(i, float(t - first), frame.to_ndarray(format="rgb24"))
        except av.FFmpegError as exc:
            raise InputError(f"Could not decode {Path(self.source).name}: {exc}") from None

    def close(self) -> None:
        self.container.close()

    def __enter__(self) -> "VideoReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def write_video(path: str | Path, frames: Iterable[np.ndarray], fps: int = 25, codec: str = "mpeg4") -> Path:
    """Write (H, W, 3) uint8 frames to a video file (tests, benchmarks, snapshots of a sequence)."""
    import av

    path = Path(path)
    with av.open(str(path), "w") as container:
        stream = None
        for rgb in frames:
            if stream is None:
                stream = container.add_stream(codec, rate=fps)
                stream.bit_rate = 20_000_000  # near-lossless: tests compare pixels
                stream.height, stream.width = rgb.shape[:2]
                stream.pix_fmt = "yuv420p"
            container.mux(stream.encode(av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")))
        if stream is not None:
            container.mux(stream.encode())
    return path
