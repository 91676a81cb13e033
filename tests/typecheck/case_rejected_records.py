"""The record of a run's failures and its listeners: each marked line is an error in every checker.

Kept apart from `case_rejected.py`: a listener case there changes the error code mypy gives
that file's bad constructor calls.
"""

from __future__ import annotations

from langgraph.prebuilt.tool_node import ToolCallRequest

from langchain_tool_errors import (
    AFailureListener,
    FailureListener,
    FailureOutcome,
    Route,
    ToolErrorMiddleware,
    ToolFailure,
)


def on_error(exc: Exception, request: ToolCallRequest) -> str | None:
    return None


# A listener takes the failure's ToolFailure, alone, and returns nothing (awaits to nothing).
def takes_a_str(failure: str) -> None:
    pass


def returns_a_value(failure: ToolFailure) -> bool:
    return True


def takes_nothing() -> None:
    pass


def takes_two(failure: ToolFailure, extra: int) -> None:
    pass


async def areturns_a_value(failure: ToolFailure) -> int:
    return 1


listener_of_str: FailureListener = takes_a_str  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]  # ty: ignore[invalid-assignment]  # pyrefly: ignore[bad-assignment]
listener_with_value: FailureListener = returns_a_value  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]  # ty: ignore[invalid-assignment]  # pyrefly: ignore[bad-assignment]
listener_of_nothing: FailureListener = takes_nothing  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]  # ty: ignore[invalid-assignment]  # pyrefly: ignore[bad-assignment]
listener_of_two: FailureListener = takes_two  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]  # ty: ignore[invalid-assignment]  # pyrefly: ignore[bad-assignment]
alistener_with_value: AFailureListener = areturns_a_value  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]  # ty: ignore[invalid-assignment]  # pyrefly: ignore[bad-assignment]
ToolErrorMiddleware(on_error, listeners=[takes_a_str])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
ToolErrorMiddleware(on_error, listeners=takes_nothing)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
ToolErrorMiddleware.from_routes([Route(KeyError, on_error)], listeners=[takes_two])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]

# Keeping a record is yes or no.
ToolErrorMiddleware(on_error, record_failures="yes")  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[no-matching-overload]
ToolErrorMiddleware.from_routes([Route(KeyError, on_error)], record_failures=1)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # ty: ignore[invalid-argument-type]  # pyrefly: ignore[bad-argument-type]

# A record's outcome is one of four, and it has only its own keys.
outcome: FailureOutcome = "ignored"  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]  # ty: ignore[invalid-assignment]  # pyrefly: ignore[bad-assignment]


def read_the_record(failure: ToolFailure) -> None:
    print(failure["message"])  # type: ignore[typeddict-item]  # pyright: ignore[reportGeneralTypeIssues, reportUnknownArgumentType]  # ty: ignore[invalid-typed-dict-key]  # pyrefly: ignore[bad-typed-dict-key]
    failure["outcome"] = "retried"  # type: ignore[typeddict-item]  # pyright: ignore[reportGeneralTypeIssues]  # ty: ignore[invalid-assignment]  # pyrefly: ignore[bad-assignment]
