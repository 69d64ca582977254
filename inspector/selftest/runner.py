"""Runs self-test steps in the sandbox: one line per step, and a JSON report written before
each step (so a step that kills the process is still named). Imports neither torch nor Qt."""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path
from typing import Callable

from .base import Context, SelfTestError
from .sandbox import sandbox

Step = tuple[str, Callable[[Context], None]]
_FAILURES: list[BaseException] = []


def run_steps(steps: list[Step], json_path: str | Path | None = None, keep: bool = False, out=None) -> int:
    """Run `steps` in the sandbox, one line each on `out`; 0 when every one passed, else 1."""
    out = out if out is not None else sys.stdout
    json_path = Path(json_path).resolve() if json_path else None  # before the sandbox changes folder
    records, started = [], time.perf_counter()
    with sandbox(keep) as ctx:
        for name, fn in steps:
            # Written before each step, so that a crash that kills the process (a Qt abort, a
            # segfault in a native library) still leaves a report naming the step it died in.
            _write_report(json_path, records + [{"name": name, "ok": False, "seconds": None,
                                                 "error": "did not finish: the process died in this step"}],
                          time.perf_counter() - started, ctx.info)
            t0 = time.perf_counter()
            error = None
            try:
                fn(ctx)
            except BaseException as exc:  # noqa: BLE001 - a step may fail any way; the report says how
                if isinstance(exc, KeyboardInterrupt):
                    raise
                error = f"{type(exc).__name__}: {exc}"
                _FAILURES.append(exc)  # keeps the failed step's objects (a half-built window's thread) alive
                if not isinstance(exc, SelfTestError):
                    error += "\n" + "".join(traceback.format_exception(exc)[-6:]).rstrip()
            seconds = time.perf_counter() - t0
            records.append({"name": name, "ok": error is None, "seconds": round(seconds, 3), "error": error})
            line = f"{'PASS' if error is None else 'FAIL'}  {name:<20} {seconds:7.2f} s"
            if error:
                line += "  " + error.splitlines()[0]
            print(line, file=out, flush=True)
        info = dict(ctx.info)
    ok = bool(records) and all(r["ok"] for r in records)
    total = time.perf_counter() - started
    failed = [r["name"] for r in records if not r["ok"]]
    print(f"self-test {'passed' if ok else 'FAILED: ' + ', '.join(failed)} "
          f"({sum(r['ok'] for r in records)}/{len(records)} steps, {total:.1f} s)", file=out, flush=True)
    _write_report(json_path, records, total, info)
    return 0 if ok else 1


def _write_report(json_path: Path | None, records: list[dict], seconds: float, info: dict) -> None:
    if json_path is None:
        return
    ok = bool(records) and all(r["ok"] for r in records)
    failed = [r["name"] for r in records if not r["ok"]]
    report = {"ok": ok, "steps": records, "failed": failed, "seconds": round(seconds, 3), "info": info}
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
