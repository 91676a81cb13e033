"""A griffe extension: the reference shows no private name in a signature or parameter table.

The package supports Python 3.11, so its generic functions use module-level type variables,
private by convention (`_C = TypeVar("_C", bound=ToolErrorContent)`), where Python 3.12
would write `def f[C: ToolErrorContent](...)`. This extension shows them the 3.12 way:

- every private type variable of the package is shown under its name without the leading
  underscore and without a variance suffix, as a 3.12 type parameter is written (`_C` as
  `C`, `_ContentT_co` as `ContentT`), with no link; `type_variables_shown_as` spells out
  a short name, so a class's parameter reads as its constructor's does (`_ExcT_co` as
  `ExceptionT`, the name the overloads of `__init__` give it);
- a function or overload declares the type variables its parameters and return use, other
  than its class's own, as type parameters with their bounds, which mkdocstrings renders
  in front of the signature (`log_handled[C: ToolErrorContent, E: Exception](...)`);
- an internal alias named in `shown_as` is shown as the public type it stands for (the
  implementation of an overloaded `__init__` stores a handler as a plain callable, but the
  parameter table should name what a user passes: an `OnError`);
- an attribute whose value is computed by private code (`self.times =
  _require_times(times)`) shows its name and type, without the value.

A name in `shown_as` or `type_variables_shown_as` that the package no longer uses is a
warning, and so is one entry rendering two type variables under the same name: a strict
build fails instead of keeping a stale entry or showing an ambiguous signature.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any

import griffe
from typing_extensions import override

_TYPE_VAR = frozenset({"typing.TypeVar", "typing_extensions.TypeVar"})
_VARIANCE_SUFFIXES = ("_co", "_contra")
_GENERIC_BASES = frozenset(
    {"typing.Generic", "typing_extensions.Generic", "typing.Protocol", "typing_extensions.Protocol"}
)
# A logger under "mkdocs" counts towards `mkdocs build --strict`'s warnings.
_LOG = logging.getLogger("mkdocs.plugins.readable_signatures")


def _names(expression: str | griffe.Expr | None) -> Iterator[griffe.ExprName]:
    """Every name in an expression (a flat iteration yields its strings and names)."""
    if isinstance(expression, griffe.Expr):
        for part in expression.iterate(flat=True):
            if isinstance(part, griffe.ExprName):
                yield part


def _is_private(name: str) -> bool:
    """`_x` and `_X` are private; dunders such as `__name__` are not."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _shown_name(name: str) -> str:
    """A type variable's name as a 3.12 type parameter: no underscore, no variance suffix."""
    name = name.lstrip("_")
    for suffix in _VARIANCE_SUFFIXES:
        name = name.removesuffix(suffix)
    return name


def _type_variable(attribute: griffe.Attribute, shown: str) -> griffe.TypeParameter | None:
    """The type parameter a `X = TypeVar("X", ...)` assignment declares, named `shown`."""
    call = attribute.value
    if not isinstance(call, griffe.ExprCall) or not isinstance(call.function, griffe.ExprName):
        return None
    if call.function.canonical_path not in _TYPE_VAR:
        return None
    keywords = {
        argument.name: argument.value
        for argument in call.arguments
        if isinstance(argument, griffe.ExprKeyword)
    }
    return griffe.TypeParameter(
        shown,
        kind=griffe.TypeParameterKind.type_var,
        bound=keywords.get("bound"),
        default=keywords.get("default"),
    )


def _objects(obj: griffe.Object) -> Iterator[griffe.Object]:
    """`obj` and every object defined in it (aliases, i.e. imports, left out)."""
    yield obj
    for member in obj.members.values():
        if not isinstance(member, griffe.Alias):
            yield from _objects(member)


def _functions(obj: griffe.Object) -> Iterator[griffe.Function]:
    """A function and its overloads; nothing for other objects."""
    if isinstance(obj, griffe.Function):
        yield obj
        yield from obj.overloads or ()


def _rendered_names(obj: griffe.Object) -> Iterator[griffe.ExprName]:
    """Every name the reference may render for `obj`: annotations, defaults, values, bases."""
    for function in _functions(obj):
        for parameter in function.parameters:
            yield from _names(parameter.annotation)
            yield from _names(parameter.default)
        yield from _names(function.returns)
    if isinstance(obj, griffe.Attribute):
        yield from _names(obj.annotation)
        yield from _names(obj.value)
    if isinstance(obj, griffe.TypeAlias):
        yield from _names(obj.value)
    if isinstance(obj, griffe.Class):
        for base in obj.bases:
            yield from _names(base)


def _class_type_variables(cls: griffe.Class) -> set[str]:
    """The paths of the type variables `Generic[...]` or `Protocol[...]` makes `cls` generic in."""
    own: set[str] = set()
    for base in cls.bases:
        if isinstance(base, griffe.ExprSubscript) and base.canonical_path in _GENERIC_BASES:
            own.update(name.canonical_path for name in _names(base.slice))
    return own


def _function_type_variables(
    function: griffe.Function, variables: Mapping[str, griffe.TypeParameter]
) -> list[griffe.TypeParameter]:
    """The type variables `function` uses that its class does not declare, in order of use."""
    parent = function.parent
    declared: set[str] = set()
    if isinstance(parent, griffe.Class):
        declared = _class_type_variables(parent)
    used: dict[str, griffe.TypeParameter] = {}
    for index, parameter in enumerate(function.parameters):
        if index == 0 and parameter.name in {"self", "cls"} and isinstance(parent, griffe.Class):
            continue  # never rendered: an annotated `self` picks the class's parameters
        for name in _names(parameter.annotation):
            path = name.canonical_path
            if path in variables and path not in declared:
                used.setdefault(path, variables[path])
    for name in _names(function.returns):
        path = name.canonical_path
        if path in variables and path not in declared:
            used.setdefault(path, variables[path])
    return list(used.values())


def _warn_of_ambiguous_names(
    obj: griffe.Object, variables: Mapping[str, griffe.TypeParameter]
) -> None:
    """A warning if what the reference renders for `obj` shows two type variables as one name."""
    paths: dict[str, set[str]] = {}
    for name in _rendered_names(obj):
        path = name.canonical_path
        if path in variables:
            paths.setdefault(variables[path].name, set()).add(path)
    for shown, same in sorted(paths.items()):
        if len(same) > 1:
            _LOG.warning(
                "readable_signatures: %s shows %s all as %s; name one apart in "
                "type_variables_shown_as",
                obj.path,
                ", ".join(sorted(same)),
                shown,
            )


class ReadableSignatures(griffe.Extension):
    """Show private type variables as type parameters, internal aliases as public types."""

    def __init__(
        self,
        package: str,
        shown_as: Mapping[str, str] | None = None,
        type_variables_shown_as: Mapping[str, str] | None = None,
    ) -> None:
        """Act on `package`.

        Args:
            package: The implementation package whose objects are rewritten.
            shown_as: An internal alias's path, mapped to the path of the public type shown.
            type_variables_shown_as: A private type variable's path, mapped to the name it
                is shown under in place of the one `_shown_name` gives it.
        """
        super().__init__()
        self.package = package
        self.shown_as = dict(shown_as or {})
        self.type_variables_shown_as = dict(type_variables_shown_as or {})

    @override
    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        """Rewrite the names the reference renders, once the whole package is loaded."""
        if pkg.name != self.package:
            return
        objects = list(_objects(pkg))
        variables = {
            obj.path: variable
            for obj in objects
            if isinstance(obj, griffe.Attribute)
            and _is_private(obj.name)
            and (
                variable := _type_variable(
                    obj, self.type_variables_shown_as.get(obj.path, _shown_name(obj.name))
                )
            )
            is not None
        }
        for path in sorted(set(self.type_variables_shown_as) - set(variables)):
            _LOG.warning(
                "readable_signatures: %s is no private type variable; drop it from "
                "type_variables_shown_as",
                path,
            )
        for obj in objects:
            _warn_of_ambiguous_names(obj, variables)
        # Decide everything from the names as written, then rename: a renamed name no
        # longer resolves to its declaration.
        for obj in objects:
            for function in _functions(obj):
                declared = _function_type_variables(function, variables)
                if declared:
                    function.type_parameters = griffe.TypeParameters(*declared)
        renames = [(name, name.canonical_path) for obj in objects for name in _rendered_names(obj)]
        unused = set(self.shown_as)
        for name, path in renames:
            if path in variables:
                name.name = variables[path].name
                name.parent = None  # plain text: a type variable has no page to link to
            elif path in self.shown_as:
                unused.discard(path)
                module, _, public = self.shown_as[path].rpartition(".")
                name.name = public
                name.parent = module  # links to the public name's entry
        for obj in objects:
            if isinstance(obj, griffe.Attribute) and any(
                _is_private(name.name) for name in _names(obj.value)
            ):
                obj.value = None
        for path in sorted(unused):
            _LOG.warning(
                "readable_signatures: %s appears in no signature; drop it from shown_as", path
            )
