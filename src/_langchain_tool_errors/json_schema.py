"""What a tool's JSON schema refuses in a call's arguments, each with what it expects there.

MCP tools, and tools built with `args_schema=<dict>`, describe their arguments with a JSON
schema rather than a pydantic model. When such a call fails, `classifying` asks this module
whether the schema refuses the arguments, to class the failure as invalid arguments with
its field errors. A deliberately small checker, strict only where it is sure; it says what
the schema expects, never what the arguments hold.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TypeAlias, cast

from typing_extensions import TypeIs

Refusal: TypeAlias = tuple[tuple[str, ...], str]
"""Where in the arguments a JSON schema refuses a value (its path), and what it expects."""


def json_schema_refusals(schema: Mapping[str, object], args: Mapping[str, object]) -> list[Refusal]:
    """What a tool's JSON schema refuses in the arguments, each with what it expects there.

    A deliberately small checker, strict only where it is sure: `type`, `enum`, `const`,
    `properties`, `required`, `additionalProperties`, `items` and `prefixItems`, the length
    and count bounds (`minLength`, `maxLength`, `minItems`, `maxItems`), the number bounds
    (`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`), `allOf`, `anyOf` and
    `oneOf` (a value fitting none of the choices is refused; one fitting two is not), and
    `$ref` within the schema. Any other keyword is not checked, so it never refuses what a
    full validator would accept. The expectations name the schema's values, never the
    arguments'.
    """
    return _refusals(schema, args, (), schema, frozenset())


def _as_mapping(value: object) -> Mapping[str, object] | None:
    # `isinstance` leaves the key and value types unknown, which the strict checkers
    # report; a JSON object's keys are strings, and the cast only says so.
    return cast("Mapping[str, object]", value) if isinstance(value, Mapping) else None


def _as_list(value: object) -> Sequence[object] | None:
    # As above: `isinstance` leaves the item type unknown.
    return cast("Sequence[object]", value) if isinstance(value, (list, tuple)) else None


def _is_number(value: object) -> TypeIs[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_integer(value: object) -> TypeIs[int | float]:
    if isinstance(value, float):
        return value.is_integer()
    return isinstance(value, int) and not isinstance(value, bool)


_JSON_TYPES: dict[str, tuple[str, Callable[[object], bool]]] = {
    "string": ("a valid string", lambda value: isinstance(value, str)),
    "integer": ("a valid integer", _is_integer),
    "number": ("a valid number", _is_number),
    "boolean": ("a valid boolean", lambda value: isinstance(value, bool)),
    "object": ("an object", lambda value: _as_mapping(value) is not None),
    "array": ("an array", lambda value: _as_list(value) is not None),
    "null": ("null", lambda value: value is None),
}
"""Each JSON-schema type: what a message says it expects, and whether a value is one."""

_BOUNDS: tuple[tuple[str, Callable[[float, float], bool], str], ...] = (
    ("minimum", lambda value, bound: value >= bound, "greater than or equal to"),
    ("maximum", lambda value, bound: value <= bound, "less than or equal to"),
    ("exclusiveMinimum", lambda value, bound: value > bound, "greater than"),
    ("exclusiveMaximum", lambda value, bound: value < bound, "less than"),
)
"""The number bounds: the keyword, whether a value keeps it, and how a message says it."""

_LENGTHS: tuple[tuple[str, str, bool], ...] = (
    ("minLength", "String should have at least {} characters", True),
    ("maxLength", "String should have at most {} characters", False),
)
"""A string's length bounds: the keyword, its message, and whether it is a minimum."""

_COUNTS: tuple[tuple[str, str, bool], ...] = (
    ("minItems", "Array should have at least {} items", True),
    ("maxItems", "Array should have at most {} items", False),
)
"""An array's count bounds: the keyword, its message, and whether it is a minimum."""

_SHOULD_BE = "Input should be "


def _json_equal(left: object, right: object) -> bool:
    # JSON tells `true` from `1`, Python does not.
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    return left == right


def _one_of(options: Sequence[str]) -> str:
    return options[0] if len(options) == 1 else f"{', '.join(options[:-1])} or {options[-1]}"


def _refusals(
    schema: object,
    value: object,
    path: tuple[str, ...],
    root: Mapping[str, object],
    followed: frozenset[str],
) -> list[Refusal]:
    """What `schema` refuses in `value` at `path`.

    `followed` are the `$ref`s already followed at this path, so a schema that refers to
    itself without going deeper into the value ends instead of looping.
    """
    if schema is False:
        return [(path, "No value is allowed here")]
    rules = _as_mapping(schema)
    if rules is None:
        return []
    refused: list[Refusal] = []
    ref = rules.get("$ref")
    if isinstance(ref, str) and ref not in followed:
        target = _resolve(ref, root)
        if target is not None:
            refused += _refusals(target, value, path, root, followed | {ref})
    declared = rules.get("type")
    names = [declared] if isinstance(declared, str) else _as_list(declared) or []
    kinds = [_JSON_TYPES.get(name) if isinstance(name, str) else None for name in names]
    if kinds and None not in kinds:
        known = [kind for kind in kinds if kind is not None]
        if not any(fits(value) for _, fits in known):
            return [*refused, (path, _SHOULD_BE + _one_of([said for said, _ in known]))]
    allowed = _as_list(rules.get("enum"))
    if allowed is not None and not any(_json_equal(value, option) for option in allowed):
        refused.append((path, _SHOULD_BE + _one_of([json.dumps(option) for option in allowed])))
    if "const" in rules and not _json_equal(value, rules["const"]):
        refused.append((path, _SHOULD_BE + json.dumps(rules["const"])))
    for branch in _as_list(rules.get("allOf")) or ():
        refused += _refusals(branch, value, path, root, followed)
    for keyword in ("anyOf", "oneOf"):
        branches = _as_list(rules.get(keyword))
        if branches:
            refused += _none_fits(branches, value, path, root, followed)
    refused += _within_bounds(rules, value, path)
    if (members := _as_mapping(value)) is not None:
        refused += _object_refusals(rules, members, path, root)
    elif (items := _as_list(value)) is not None:
        refused += _array_refusals(rules, items, path, root)
    return refused


def _resolve(ref: str, root: Mapping[str, object]) -> object | None:
    """The part of the schema a local `$ref` (`#/$defs/Address`) points to, or `None`."""
    if not ref.startswith("#"):
        return None
    target: object = root
    for part in filter(None, ref[1:].split("/")):
        parent = _as_mapping(target)
        key = part.replace("~1", "/").replace("~0", "~")
        if parent is None or key not in parent:
            return None
        target = parent[key]
    return target


def _none_fits(
    branches: Sequence[object],
    value: object,
    path: tuple[str, ...],
    root: Mapping[str, object],
    followed: frozenset[str],
) -> list[Refusal]:
    """A refusal if the value fits none of the choices: the one it is closest to, or all."""
    tried = [_refusals(branch, value, path, root, followed) for branch in branches]
    if not all(tried):
        return []
    deeper = [refused for refused in tried if any(where != path for where, _ in refused)]
    if len(deeper) == 1:
        # The value is of one choice's type and fails inside it: those are its errors.
        return deeper[0]
    said = [expected for refused in tried for where, expected in refused if where == path]
    options = [expected.removeprefix(_SHOULD_BE) for expected in dict.fromkeys(said)]
    if deeper or not all(expected.startswith(_SHOULD_BE) for expected in said):
        return [(path, "Input fits none of the choices allowed here")]
    return [(path, _SHOULD_BE + _one_of(options))]


def _within_bounds(
    rules: Mapping[str, object], value: object, path: tuple[str, ...]
) -> list[Refusal]:
    refused: list[Refusal] = []
    if _is_number(value):
        for keyword, keeps, said in _BOUNDS:
            bound = rules.get(keyword)
            if _is_number(bound) and not keeps(value, bound):
                refused.append((path, f"{_SHOULD_BE}{said} {bound}"))
    if isinstance(value, str):
        size, limits = len(value), _LENGTHS
    elif (items := _as_list(value)) is not None:
        size, limits = len(items), _COUNTS
    else:
        return refused
    for keyword, said, at_least in limits:
        limit = rules.get(keyword)
        if not _is_integer(limit):
            continue
        if size < limit if at_least else size > limit:
            refused.append((path, said.format(int(limit))))
    return refused


def _object_refusals(
    rules: Mapping[str, object],
    members: Mapping[str, object],
    path: tuple[str, ...],
    root: Mapping[str, object],
) -> list[Refusal]:
    refused: list[Refusal] = []
    properties = _as_mapping(rules.get("properties")) or {}
    required = [name for name in _as_list(rules.get("required")) or () if isinstance(name, str)]
    for name, rule in properties.items():
        if name in members:
            refused += _refusals(rule, members[name], (*path, name), root, frozenset())
    refused += [((*path, name), "Field required") for name in required if name not in members]
    extra = rules.get("additionalProperties")
    if extra is None or extra is True or "patternProperties" in rules:
        return refused
    for name in [name for name in members if name not in properties]:
        if extra is False:
            refused.append(((*path, name), "Extra inputs are not permitted"))
        else:
            refused += _refusals(extra, members[name], (*path, name), root, frozenset())
    return refused


def _array_refusals(
    rules: Mapping[str, object],
    items: Sequence[object],
    path: tuple[str, ...],
    root: Mapping[str, object],
) -> list[Refusal]:
    each = rules.get("items")
    first = _as_list(rules.get("prefixItems")) or _as_list(each) or ()
    rest = None if _as_list(each) is not None else each
    refused: list[Refusal] = []
    for index, item in enumerate(items):
        rule = first[index] if index < len(first) else rest
        if rule is not None:
            refused += _refusals(rule, item, (*path, str(index)), root, frozenset())
    return refused
