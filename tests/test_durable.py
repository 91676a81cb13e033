"""Durable execution: an interrupted run is resumed in another process from SQLite.

A tool calls `interrupt()` under a real SQLite checkpointer. One process runs the agent
until it pauses; a second process, sharing nothing but the database file, resumes it. The
middleware's handler is never called, and the resumed tool result reaches the model.
"""

from __future__ import annotations

import json
from pathlib import Path as FilePath
from typing import Any

from tests._agents import Path
from tests._processes import run_python
from tests.conftest import FIGURES


def _phase(phase: str, db: FilePath, handler_log: FilePath, path: Path) -> dict[str, Any]:
    done = run_python("-m", "tests._durable", phase, str(db), str(handler_log), path, timeout=120)
    assert done.returncode == 0, done.stderr
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return summary


def test_a_run_paused_in_one_process_resumes_in_another(path: Path, tmp_path: FilePath) -> None:
    db, handler_log = tmp_path / "checkpoints.sqlite", tmp_path / "handler.log"

    paused = _phase("pause", db, handler_log, path)
    resumed = _phase("resume", db, handler_log, path)

    assert paused == {"interrupts": [{"question": "approve a refund of 120?"}]}
    assert resumed == {
        "tool_content": "refund of 120 approved by alice",
        "tool_status": "success",
        "answer": "The model read: refund of 120 approved by alice",
    }
    assert not handler_log.exists(), "the handler must never see an interrupt"
    FIGURES.append(f"durable ({path} path): paused in one process, resumed in a second")
