"""Checkpoint savers that show each write to the test before saving it.

A test subclasses `Watching` beside a real saver (`class Recording(Watching, SqliteSaver)`)
and says in `saving` what a write meets on its way: it is remembered, or the database fails
as one that went away would. The async `aput` and `aput_writes` of the in-memory saver call
`put` and `put_writes`, so one hook serves both paths there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
)
from typing_extensions import override


class Watching(BaseCheckpointSaver[str]):
    """A saver that calls `saving` with each write before it saves it."""

    def saving(self, checkpoint: Checkpoint | None, writes: Sequence[tuple[str, Any]]) -> None:
        """Called before a write: a checkpoint (`writes` empty) or a step's writes
        (`checkpoint` None). What it raises, the write raises, unsaved."""

    @override
    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        self.saving(checkpoint, ())
        return super().put(config, checkpoint, metadata, new_versions)

    @override
    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.saving(None, writes)
        super().put_writes(config, writes, task_id, task_path)
