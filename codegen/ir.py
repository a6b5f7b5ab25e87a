"""The intermediate representation every renderer reads.

Frozen, slotted dataclasses holding tuples only, so a catalog can be shared, cached and
compared, and no renderer can change what another one sees. Type nodes form a small closed
set; named object types carry their fields in schema order; names are final (decided once
in `build`). JSON values kept for documentation (defaults, examples, constraint bounds) are
stored as compact JSON text so they stay immutable and exact (big integers included).

Why the classes are made by `_value_class` and not by `dataclass` itself: a frozen
dataclass's `__init__` sets each field through `object.__setattr__` (its own `__setattr__`
refuses), which made creating IR objects (mostly `Field`s and `Docs`) a sixth of a big
catalog's build, and `dataclass` compiles six methods per class. `_value_class(frozen=True,
slots=True)` makes the same classes (pinned against the standard decorator by
`tests/test_ir_classes.py`) with an `__init__` that stores each field through its slot's
own setter, and compiles a class's methods in one go. Type checkers see the standard
decorator, which describes these classes exactly. It is kept because it pays more than the
2% of a large build asked of such machinery: `bench/bench_value_class_ab.py` times the same
tree with the standard decorator instead, and a whole `codegen sdk --jobs 1` on BFCL or
ToolUniverse takes about 4% more CPU time without it (2-6% over three runs; the compile
alone 4-7% more, `import codegen.ir` 3 ms more), for byte-identical output.

One way to build a frozen value with a derived field, in the whole package: a
`dataclass(frozen=True, slots=True)` keeps its generated `__init__`, declares the derived
field `field(init=False, repr=False, compare=False)` and sets it in `__post_init__` with
`object.__setattr__`, the standard library's way (the one-line `text` of
`render.python.black_layout`'s `Sub` and `Union`, `load.formats._Layout.fields`). No
frozen dataclass writes its own `__init__` (`tests/test_ir_classes.py` checks). IR classes
derive no field, and `_value_class` refuses a class that would: what is computed from the
IR is computed where it is used, or lazily, as `RawSchemas` serializes its schemas.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import MISSING, FrozenInstanceError, dataclass, field, fields, is_dataclass
from operator import attrgetter
from reprlib import recursive_repr
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar

_T = TypeVar("_T")


class _Factory:
    """The default shown for a field made by a default factory, as in `dataclass`."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def _make_value_class(cls: type[_T]) -> type[_T]:
    """`dataclass(frozen=True, slots=True)`, made cheaper. The standard decorator still
    records the fields and builds the slotted class (so `fields`, `replace`, `is_dataclass`
    and `__match_args__` work as before), but makes none of the methods:

    - `__init__`, `__eq__`, `__hash__` and `__repr__` are compiled here from one source
      text per class (`dataclass` compiles each method on its own), the last three as
      `dataclass` writes them. `__init__` has the same signature, defaults and annotations,
      but stores each field with its slot's setter (`Field.key.__set__`), which skips the
      attribute lookup `object.__setattr__` makes: a third cheaper for a `Field`, half for
      a `Docs`;
    - `__setattr__` and `__delattr__` raise `FrozenInstanceError`, with dataclass's
      messages, and `__getstate__` / `__setstate__` are dataclass's for slotted classes;
    - `__dataclass_params__` says what `dataclass(frozen=True, slots=True)` would.

    A class with a derived field (`field(init=False)`, `__post_init__`) is refused: this
    `__init__` would take the field as a parameter and never call `__post_init__`."""
    cls = dataclass(slots=True, init=False, repr=False, eq=False)(cls)
    specs = fields(cls)  # type: ignore[arg-type]
    if hasattr(cls, "__post_init__") or not all(spec.init for spec in specs):
        raise TypeError(f"{cls.__qualname__}: IR classes derive no field (see `codegen.ir`)")
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    params.init = params.repr = params.eq = params.frozen = True

    namespace: dict[str, Any] = {"__name__": cls.__module__, "_FACTORY": _FACTORY}
    parameters, stores = [], []
    for spec in specs:
        name = spec.name
        namespace[f"_set_{name}"] = getattr(cls, name).__set__
        value = name
        if spec.default is not MISSING:
            namespace[f"_default_{name}"] = spec.default
            parameters.append(f"{name}=_default_{name}")
        elif spec.default_factory is not MISSING:
            namespace[f"_factory_{name}"] = spec.default_factory
            parameters.append(f"{name}=_FACTORY")
            value = f"_factory_{name}() if {name} is _FACTORY else {name}"
        else:
            parameters.append(name)
        stores.append(f"\n    _set_{name}(self, {value})")
    compared = [spec.name for spec in specs if spec.compare]
    mine = "".join(f"self.{name}," for name in compared)
    theirs = "".join(f"other.{name}," for name in compared)
    shown = ", ".join(f"{spec.name}={{self.{spec.name}!r}}" for spec in specs if spec.repr)
    exec(
        f"def __init__(self, {', '.join(parameters)}):{''.join(stores) or ' pass'}\n"
        "def __eq__(self, other):\n"
        "    if other.__class__ is self.__class__:\n"
        f"        return ({mine}) == ({theirs})\n"
        "    return NotImplemented\n"
        "def __hash__(self):\n"
        f"    return hash(({mine}))\n"
        "def __repr__(self):\n"
        f'    return self.__class__.__qualname__ + f"({shown})"\n',
        namespace,
    )
    namespace["__init__"].__annotations__ = {spec.name: spec.type for spec in specs} | {
        "return": None
    }
    namespace["__repr__"] = recursive_repr()(namespace["__repr__"])
    for method in ("__init__", "__eq__", "__hash__", "__repr__"):
        namespace[method].__qualname__ = f"{cls.__qualname__}.{method}"
        setattr(cls, method, namespace[method])
    for method, shared in _SHARED_METHODS.items():
        setattr(cls, method, shared)
    return cls


def _frozen_setattr(self: object, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _slots_getstate(self: Any) -> list[Any]:
    return [getattr(self, spec.name) for spec in fields(self)]


def _slots_setstate(self: Any, state: list[Any]) -> None:
    for spec, value in zip(fields(self), state, strict=False):
        object.__setattr__(self, spec.name, value)


_SHARED_METHODS = {
    "__setattr__": _frozen_setattr,
    "__delattr__": _frozen_delattr,
    "__getstate__": _slots_getstate,
    "__setstate__": _slots_setstate,
}


if TYPE_CHECKING:
    from dataclasses import dataclass as _value_class
else:

    def _value_class(*, frozen: bool, slots: bool) -> Callable[[type[_T]], type[_T]]:
        """`dataclass(frozen=True, slots=True)` for the IR classes: see `_make_value_class`."""
        if not (frozen and slots):
            raise TypeError("IR classes are frozen and slotted")
        return _make_value_class


Scalar: TypeAlias = str | int | float | bool | None
PrimitiveKind = Literal["string", "number", "integer", "boolean", "null"]


ARMS_LIMIT = 250
"""Most arms one spelled union may join once nested unions are flattened (a literal's values
count as one arm): `pyright` stops parsing a chain of more than 256 `|` operators. Wider
unions degrade (the build); a renderer's own spelling stays within it too."""
EXPRESSION_LIMIT = 500
"""Deepest Python syntax tree one inline type may spell (every `|` arm and every subscript
adds a level); deeper nodes degrade. CPython's parser gives up near 3000 levels and
`pyright`'s checker runs out of stack near 900."""


@_value_class(frozen=True, slots=True)
class Docs:
    """Documentation keywords of one schema node; none of them changes the type."""

    description: str | None = None
    title: str | None = None
    default: str | None = None
    examples: tuple[str, ...] = ()
    format: str | None = None
    pattern: str | None = None
    constraints: tuple[tuple[str, str], ...] = ()
    deprecated: bool = False
    read_only: bool = False
    write_only: bool = False
    notes: tuple[str, ...] = ()

    def is_empty(self) -> bool:
        return self == EMPTY_DOCS


EMPTY_DOCS = Docs()


@_value_class(frozen=True, slots=True)
class Primitive:
    """A JSON scalar type (`string`, `integer`, `number`, `boolean`, `null`)."""

    kind: PrimitiveKind


@_value_class(frozen=True, slots=True)
class AnyType:
    """The schema accepts any JSON value (`{}`, `true`)."""


@_value_class(frozen=True, slots=True)
class NeverType:
    """The schema accepts no value (`false`, `{"not": {}}`)."""


@_value_class(frozen=True, slots=True)
class LiteralType:
    """`enum` / `const` of scalar values, in schema order."""

    values: tuple[Scalar, ...]


@_value_class(frozen=True, slots=True)
class ArrayType:
    """A list whose items all have one type."""

    items: TypeNode


@_value_class(frozen=True, slots=True)
class TupleType:
    """`prefixItems`: positional items, how many are required, and the type of any further
    items (None when no more are allowed)."""

    items: tuple[TypeNode, ...]
    min_items: int
    rest: TypeNode | None


@_value_class(frozen=True, slots=True)
class MapType:
    """An object with no declared properties whose values all have one type."""

    values: TypeNode


@_value_class(frozen=True, slots=True)
class RefType:
    """A reference to a named type of the same catalog."""

    name: str


@_value_class(frozen=True, slots=True)
class UnionType:
    """Any of the arms (`anyOf`, `oneOf`, type lists), flattened and without repeats."""

    arms: tuple[TypeNode, ...]


@_value_class(frozen=True, slots=True)
class UnknownType:
    """A node degraded because the schema says something no target can express."""

    reason: str


TypeNode: TypeAlias = (
    Primitive
    | AnyType
    | NeverType
    | LiteralType
    | ArrayType
    | TupleType
    | MapType
    | RefType
    | UnionType
    | UnknownType
)


@_value_class(frozen=True, slots=True)
class Field:
    """One key of an object type: its type, whether it is required, and its docs."""

    key: str
    type: TypeNode
    required: bool
    docs: Docs = EMPTY_DOCS


@_value_class(frozen=True, slots=True)
class ObjectType:
    """A named object: fields in schema order; `extra` is the type of undeclared keys, None
    when the object is closed (`additionalProperties: false`)."""

    name: str
    fields: tuple[Field, ...]
    extra: TypeNode | None
    docs: Docs = EMPTY_DOCS


@_value_class(frozen=True, slots=True)
class AliasType:
    """A named non-object type; only needed where a type refers to itself."""

    name: str
    target: TypeNode
    docs: Docs = EMPTY_DOCS


NamedType: TypeAlias = ObjectType | AliasType


class RawSchemas:
    """A tool's input and output schemas as written, for the docs catalog, which shows
    them. Serialized to compact JSON text on first use: most renders never ask, and
    serializing every schema cost a twentieth of a 5,000-tool build. Until then it holds
    the definition's own values, which the pipeline never changes. Equal, hashed and
    pickled by its text, so a `Tool` stays a comparable, cacheable value."""

    __slots__ = ("_input", "_input_text", "_output", "_output_text")

    def __init__(self, input_schema: Any = None, output_schema: Any = None) -> None:
        self._input = {} if input_schema is None else input_schema
        self._output = output_schema
        self._input_text: str | None = None
        self._output_text: str | None = None

    @classmethod
    def from_text(cls, input_text: str, output_text: str | None) -> RawSchemas:
        made = cls()
        made._input_text, made._output_text = input_text, output_text
        return made

    @property
    def input_text(self) -> str:
        if self._input_text is None:
            self._input_text = _json_text(self._input)
            self._input = None
        return self._input_text

    @property
    def output_text(self) -> str | None:
        if self._output_text is None and self._output is not None:
            self._output_text = _json_text(self._output)
            self._output = None
        return self._output_text

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RawSchemas):
            return NotImplemented
        return (self.input_text, self.output_text) == (other.input_text, other.output_text)

    def __hash__(self) -> int:
        return hash((self.input_text, self.output_text))

    def __reduce__(self) -> Any:
        return (RawSchemas.from_text, (self.input_text, self.output_text))

    def __repr__(self) -> str:
        return f"RawSchemas({self.input_text!r}, {self.output_text!r})"


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "))


def _json_text(value: Any) -> str:
    return _ENCODER.encode(value)


@_value_class(frozen=True, slots=True)
class Tool:
    """One tool. `types` are its named types, each declared after the types it uses
    (except through recursion)."""

    name: str
    description: str | None
    title: str | None
    args: TypeNode
    output: TypeNode | None
    types: tuple[NamedType, ...]
    annotations: str | None = None
    schemas: RawSchemas = field(default_factory=RawSchemas, repr=False)
    source: str = "<memory>"

    @property
    def input_schema(self) -> str:
        """The input schema as written, as compact JSON text."""
        return self.schemas.input_text

    @property
    def output_schema(self) -> str | None:
        """The output schema as written, as compact JSON text; None when there is none."""
        return self.schemas.output_text


@_value_class(frozen=True, slots=True)
class Catalog:
    """Tools sorted by name in code-point order."""

    tools: tuple[Tool, ...]

    @property
    def types(self) -> tuple[NamedType, ...]:
        return tuple(t for tool in self.tools for t in tool.types)

    def tool(self, name: str) -> Tool:
        for tool in self.tools:
            if tool.name == name:
                return tool
        raise KeyError(name)


def to_data(value: Any) -> Any:
    """The IR as plain JSON data (class name under `"node"`), for snapshots and debugging."""
    if is_dataclass(value) and not isinstance(value, type):
        data: dict[str, Any] = {"node": type(value).__name__}
        for item in fields(value):
            member = getattr(value, item.name)
            if (
                member is None
                or member is False
                or member == ()
                or (isinstance(member, Docs) and member.is_empty())
            ):
                continue
            data[item.name] = to_data(member)
        return data
    if isinstance(value, tuple):
        return [to_data(v) for v in value]
    if isinstance(value, RawSchemas):
        return {"input": value.input_text, "output": value.output_text}
    return value


def dump(catalog: Catalog) -> str:
    """Stable, readable JSON text of a catalog's IR."""
    return json.dumps(to_data(catalog), indent=1, ensure_ascii=False) + "\n"


_INVISIBLE = re.compile(
    "[\x7f-\x9f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ud800-\udfff]"
)


def _quote(value: Any) -> str:
    """JSON text that is valid UTF-8 and shows invisible characters as escapes."""
    text = json.dumps(value, ensure_ascii=False)
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def type_text(node: TypeNode) -> str:
    """A target-neutral spelling of a type, for the readable IR dump."""
    if isinstance(node, Primitive):
        return node.kind
    if isinstance(node, AnyType):
        return "any"
    if isinstance(node, NeverType):
        return "never"
    if isinstance(node, LiteralType):
        return "literal(" + ", ".join(_quote(v) for v in node.values) + ")"
    if isinstance(node, ArrayType):
        return f"array<{type_text(node.items)}>"
    if isinstance(node, TupleType):
        parts = [type_text(item) for item in node.items]
        rest = "closed" if node.rest is None else f"rest {type_text(node.rest)}"
        return f"tuple<{', '.join(parts)}; min {node.min_items}; {rest}>"
    if isinstance(node, MapType):
        return f"map<{type_text(node.values)}>"
    if isinstance(node, RefType):
        return node.name
    if isinstance(node, UnionType):
        return " | ".join(type_text(arm) for arm in node.arms)
    return f"unknown({_quote(node.reason)})"


def _docs_lines(docs: Docs, indent: str) -> list[str]:
    lines = []
    for item in fields(docs):
        value = getattr(docs, item.name)
        if value is None or value is False or value == ():
            continue
        if item.name == "constraints":
            text = ", ".join(f"{k}={v}" for k, v in value)
        elif isinstance(value, tuple):
            text = ", ".join(value)
        elif isinstance(value, bool):
            text = ""
        else:
            text = _quote(value)
        lines.append(f"{indent}@{item.name} {text}".rstrip())
    return lines


def describe(catalog: Catalog) -> str:
    """A readable, stable text form of the IR, pinned by the IR snapshots."""
    lines: list[str] = []
    for tool in catalog.tools:
        lines.append(f"tool {_quote(tool.name)}")
        for label, value in (
            ("title", tool.title),
            ("description", tool.description),
            ("annotations", tool.annotations),
        ):
            if value is not None:
                shown = value if label == "annotations" else _quote(value)
                lines.append(f"  {label}: {shown}")
        lines.append(f"  args: {type_text(tool.args)}")
        lines.append(f"  output: {type_text(tool.output) if tool.output else '(none)'}")
        for named in tool.types:
            if isinstance(named, AliasType):
                lines.append(f"  alias {named.name} = {type_text(named.target)}")
                lines.extend(_docs_lines(named.docs, "    "))
                continue
            extra = (
                "closed"
                if named.extra is None
                else "open"
                if isinstance(named.extra, AnyType)
                else f"extra {type_text(named.extra)}"
            )
            lines.append(f"  object {named.name} ({extra})")
            lines.extend(_docs_lines(named.docs, "    "))
            for item in named.fields:
                mark = "" if item.required else "?"
                key = _quote(item.key)
                lines.append(f"    {key}{mark}: {type_text(item.type)}")
                lines.extend(_docs_lines(item.docs, "      "))
        lines.append("")
    return "\n".join(lines)


def _pickled_by_fields(cls: type) -> None:
    """Pickle an IR class as `cls(*field values)`. The dataclass default for slotted
    classes looks the fields up again for every object, which made loading a cached
    5,000-tool catalog slower than building it; the empty `Docs` pickles as the shared
    `EMPTY_DOCS`, so identity checks on it keep working after a load."""
    names = tuple(item.name for item in fields(cls))
    values = attrgetter(*names) if len(names) > 1 else None

    def reduce(self: Any) -> Any:
        if self is EMPTY_DOCS:
            return "EMPTY_DOCS"
        if values is not None:
            return (cls, values(self))
        return (cls, tuple(getattr(self, name) for name in names))

    cls.__reduce__ = reduce  # type: ignore[method-assign,assignment]


for _cls in (
    Docs,
    Primitive,
    AnyType,
    NeverType,
    LiteralType,
    ArrayType,
    TupleType,
    MapType,
    RefType,
    UnionType,
    UnknownType,
    Field,
    ObjectType,
    AliasType,
    Tool,
    Catalog,
):
    _pickled_by_fields(_cls)
