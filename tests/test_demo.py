"""`python -m langchain_tool_errors`: the demo agent fails, reports, recovers, and exits 0."""

from __future__ import annotations

from tests._processes import run_python


def test_demo_shows_a_failure_handed_to_the_model_and_its_recovery() -> None:
    result = run_python("-m", "langchain_tool_errors", timeout=120)

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any("calls get_weather" in line and "Atlantis" in line for line in lines)
    error = next(line for line in lines if "ERROR" in line)
    assert "get_weather [call_1]" in error
    assert "no forecast for 'Atlantis'" in error
    assert any("get_weather [call_2] ok: 18°C and sunny" in line for line in lines)
    assert lines[-1].startswith("assistant")
    assert "Paris" in lines[-1]
