"""Tables of wrong constructions: each row builds something wrongly, and names the exception
it must raise and words its message must hold."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeAlias

import pytest

Refusal: TypeAlias = tuple[Callable[[], object], type[Exception], str]
"""A wrong construction: what builds it, the exception it raises, words of the message."""


def assert_refused(refusal: Refusal) -> None:
    """Build the row: it raises its exception, with its words in the message."""
    build, error, words = refusal
    with pytest.raises(error, match=re.escape(words)):
        build()
