"""Shared fixtures: tools that fail in the ways the tests need."""
