"""Fenced code blocks of a Markdown file, with where they start and the line before them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_FENCE = re.compile(r"^```(\w*)\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced block: its language, its text, its first line's number, and its marker.

    The marker is the nearest non-blank line above the fence when it is an HTML comment
    (`<!-- ... -->`), else "".
    """

    language: str
    text: str
    line: int
    marker: str


def fenced_blocks(path: Path) -> list[Block]:
    """Every fenced block in the file, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        above = next((lines[i] for i in range(index - 1, -1, -1) if lines[i].strip()), "")
        marker = above.strip() if above.strip().startswith("<!--") else ""
        text = "\n".join(lines[index + 1 : end]) + "\n"
        blocks.append(Block(opening.group(1), text, index + 2, marker))
        index = end + 1
    return blocks
