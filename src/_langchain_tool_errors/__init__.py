"""The implementation of `langchain_tool_errors`; import from that package instead.

Its modules live in this separate, private package so that an editor completing
`from langchain_tool_errors import ` offers the public names and no private modules.
Nothing here is a public API: names and modules may change in any release.
"""
