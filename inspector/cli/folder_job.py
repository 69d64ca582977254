"""What `network-inspector atlas` and `network-inspector concepts` share: the arguments of a job over a folder of
images (the folder, the batch, the device, --restart and --ray; each says what they mean for it), the checks made
before torch is imported, the progress bars on stderr (one a stage), Ctrl-C (stop after the batch in flight, the
same command resumes: exit 130), and the lines said after the job."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from inspector.core.common.errors import RunCancelled
from inspector.core.storage.outputs import output_folder

from . import common
from .stop_after_batch import StopAfterBatch


def add_job_parser(sub, name: str, help: str) -> argparse.ArgumentParser:
    """The command `name`: the model's arguments, then --data (the folder of images)."""
    p = sub.add_parser(name, help=help)
    common.model_args(p)
    p.add_argument("--data", required=True, help="folder of images (nested folders allowed) or a glob")
    return p


def add_run_args(p: argparse.ArgumentParser, batch: str, restart: str, ray: str) -> None:
    """--batch, --device, --restart and --ray, helped by the job's own words."""
    p.add_argument("--batch", type=int, default=16, help=batch)
    p.add_argument("--device", default="cpu", help="auto | cpu | cuda | cuda:N | mps")
    p.add_argument("--restart", action="store_true", help=restart)
    p.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS", help=ray)


def check_first(args: argparse.Namespace, *checks: Callable[[], None]) -> Path:
    """What needs no model is said before torch is imported (a second, not the model's load): the output folder,
    the job's own `checks`, the model's arguments, the images, the Ray address; then the device (torch's, but
    before the model's code is imported). The output folder back."""
    from inspector.core.folder_jobs import check_address
    from inspector.core.inputs.image_sets import list_images

    out = output_folder(args.out)
    for check in checks:
        check()
    common.check_model_args(args)
    list_images(args.data, exclude=out)
    if args.ray:
        check_address(args.ray)

    from inspector.core import resolve_device

    resolve_device(args.device)
    return out


class StageBars:
    """tqdm bars on stderr, one for each stage (name -> (description, unit)); a new stage closes the last."""

    def __init__(self, stages: dict[str, tuple[str, str]]) -> None:
        self.stages = stages
        self.bars: dict = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        from tqdm import tqdm

        if stage not in self.bars:
            self.close()
            name, unit = self.stages[stage]
            self.bars[stage] = tqdm(desc=name, total=total, unit=unit, file=sys.stderr, dynamic_ncols=True)
        self.bars[stage].update(done - self.bars[stage].n)

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()

    def stage(self, stage: str) -> Callable[[int, int], None]:
        """The progress of a job with one stage: (done, total) -> this stage's bar."""
        return lambda done, total: self(stage, done, total)


def run_stoppable(job: Callable[[Callable[[], bool]], object], bars: StageBars):
    """`job(cancel)` with Ctrl-C stopping it after its batch: its result, or None when it was cancelled (said on
    stderr; the command exits 130). The bars are closed either way."""
    try:
        with StopAfterBatch() as stop:
            result = job(stop.asked_to)
            stop.written = True
    except RunCancelled as exc:
        print(str(exc), file=sys.stderr)
        return None
    finally:
        bars.close()
    return result


def run_job(args: argparse.Namespace, job: Callable[..., object], bars: StageBars,
            progress: Callable[..., None] | None = None):
    """`job(**keywords)` given what every folder job takes from the command line (--batch, --device, --restart,
    --ray) and `progress` (default: the bars, stage by stage), Ctrl-C stopping it after its batch: its result, or
    None when it was cancelled (run_stoppable)."""
    return run_stoppable(lambda cancel: job(batch=args.batch, device=args.device, progress=progress or bars,
                                            cancel=cancel, restart=args.restart, use_ray=args.ray is not None,
                                            ray_address=args.ray or None), bars)


def say_skipped(skipped: list[dict]) -> None:
    for s in skipped:
        print(f"skipped {s['path']}: {s['reason']}", file=sys.stderr)


def say_seed(loaded) -> None:
    """The note on random weights' seed, where the model has one."""
    if loaded.seed is not None:
        print(common.seed_note(loaded.source, loaded.seed))
