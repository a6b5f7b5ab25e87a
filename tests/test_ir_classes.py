"""The IR classes behave as `dataclass(frozen=True, slots=True)` would make them.

`ir._value_class` makes them more cheaply (see `codegen/ir.py`); each one is compared here
with a reference class that the standard decorator makes from the same fields. Also pinned:
the package's one way to make a frozen value with a derived field.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import inspect
import pickle
from pathlib import Path
from typing import Any

import pytest

from codegen import ir

P = ir.Primitive("string")
SAMPLES: list[Any] = [
    ir.Docs(),
    ir.Docs(
        description="d",
        title="t",
        default="1",
        examples=("2",),
        format="date",
        pattern="^a$",
        constraints=(("minimum", "0"),),
        deprecated=True,
        read_only=True,
        write_only=True,
        notes=("n",),
    ),
    P,
    ir.AnyType(),
    ir.NeverType(),
    ir.LiteralType(("a", 1, 1.5, True, None)),
    ir.ArrayType(P),
    ir.TupleType((P, ir.AnyType()), 1, None),
    ir.MapType(P),
    ir.RefType("Name"),
    ir.UnionType((P, ir.RefType("Name"))),
    ir.UnknownType("why"),
    ir.Field("key", P, True),
    ir.Field("key", P, False, ir.Docs(description="d")),
    ir.ObjectType("Name", (ir.Field("key", P, True),), None),
    ir.AliasType("Name", P, ir.Docs(title="t")),
    ir.Tool("tool", None, None, ir.RefType("ToolArgs"), None, ()),
    ir.Tool("tool", "d", "t", P, P, (), "{}", ir.RawSchemas({"type": "object"}), "file"),
    ir.Catalog(()),
]
CLASSES = [
    value
    for name, value in vars(ir).items()
    if not name.startswith("_")
    and isinstance(value, type)
    and value.__module__ == ir.__name__
    and dataclasses.is_dataclass(value)
]


def _reference(cls: type) -> type:
    """The class `dataclass(frozen=True, slots=True)` makes from `cls`'s fields."""
    namespace: dict[str, Any] = {
        "__annotations__": dict(cls.__annotations__),
        "__qualname__": cls.__qualname__,
        "__module__": cls.__module__,
    }
    for spec in dataclasses.fields(cls):
        namespace[spec.name] = dataclasses.field(
            default=spec.default,
            default_factory=spec.default_factory,
            repr=spec.repr,
            compare=spec.compare,
        )
    return dataclasses.dataclass(frozen=True, slots=True)(type(cls.__name__, (), namespace))


def _as_reference(value: Any) -> Any:
    reference = _reference(type(value))
    return reference(*(getattr(value, spec.name) for spec in dataclasses.fields(value)))


def test_every_class_has_samples() -> None:
    assert len(CLASSES) == 16
    assert {type(value) for value in SAMPLES} == set(CLASSES)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_class_matches_the_standard_decorator(cls: type) -> None:
    reference = _reference(cls)
    assert str(inspect.signature(cls)) == str(inspect.signature(reference))
    assert cls.__init__.__annotations__ == reference.__init__.__annotations__  # type: ignore[misc]
    assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__"  # type: ignore[misc]
    assert cls.__init__.__module__ == ir.__name__  # type: ignore[misc]
    for name in ("__slots__", "__match_args__"):
        assert getattr(cls, name) == getattr(reference, name)
    assert repr(cls.__dataclass_params__) == repr(reference.__dataclass_params__)  # type: ignore[attr-defined]
    assert [f.name for f in dataclasses.fields(cls)] == [
        f.name for f in dataclasses.fields(reference)
    ]
    assert not hasattr(cls(*_required_values(cls)), "__dict__")


def _required_values(cls: type) -> list[Any]:
    return [
        "x"
        for spec in dataclasses.fields(cls)
        if spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING
    ]


@pytest.mark.parametrize("value", SAMPLES, ids=repr)
def test_instance_matches_the_standard_decorator(value: Any) -> None:
    twin = _as_reference(value)
    assert repr(value) == repr(twin)
    assert hash(value) == hash(twin)
    assert value.__getstate__() == twin.__getstate__()
    same = type(value)(*value.__getstate__())
    assert value == same and hash(value) == hash(same)
    assert value != twin  # equal only within one class
    keywords = {spec.name: getattr(value, spec.name) for spec in dataclasses.fields(value)}
    assert type(value)(**keywords) == value
    assert dataclasses.replace(value) == value
    assert dataclasses.asdict(value) == dataclasses.asdict(twin)
    for clone in (pickle.loads(pickle.dumps(value)), copy.copy(value), copy.deepcopy(value)):
        assert clone == value and type(clone) is type(value)


@pytest.mark.parametrize("value", SAMPLES, ids=repr)
def test_instance_is_frozen(value: Any) -> None:
    twin = _as_reference(value)
    for name in [spec.name for spec in dataclasses.fields(value)]:
        for act, *args in ((setattr, name, 1), (delattr, name)):
            with pytest.raises(dataclasses.FrozenInstanceError) as raised:
                act(value, *args)
            with pytest.raises(dataclasses.FrozenInstanceError) as expected:
                act(twin, *args)
            assert str(raised.value) == str(expected.value)
    # Python 3.11's own slotted frozen classes raise TypeError here (their `__setattr__`
    # names the class as it was before slots were added); these refuse as for a field.
    with pytest.raises(dataclasses.FrozenInstanceError, match="'undeclared'"):
        value.undeclared = 1
    with pytest.raises(dataclasses.FrozenInstanceError, match="'undeclared'"):
        del value.undeclared


def test_defaults_are_shared_values() -> None:
    assert ir.Field("key", P, True).docs is ir.EMPTY_DOCS
    made = ir.Tool("a", None, None, P, None, ())
    assert (
        made.schemas == ir.RawSchemas()
        and made.schemas is not ir.Tool("a", None, None, P, None, ()).schemas
    )
    with pytest.raises(TypeError):
        ir.Field("key", P)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ir.AnyType(1)  # type: ignore[call-arg]


def test_value_class_refuses_derived_fields() -> None:
    class Derived:
        key: str
        size: int = dataclasses.field(init=False)

    class PostInit:
        key: str

        def __post_init__(self) -> None:
            pass

    for cls in (Derived, PostInit):
        with pytest.raises(TypeError, match="derive no field"):
            ir._value_class(frozen=True, slots=True)(cls)


def _decorator_keywords(node: ast.ClassDef) -> list[dict[str, Any]]:
    """The keyword arguments of each `dataclass(...)` / `_value_class(...)` decorator."""
    found = []
    for decorator in node.decorator_list:
        if isinstance(decorator, ast.Call):
            name = getattr(decorator.func, "id", getattr(decorator.func, "attr", None))
            if name in ("dataclass", "_value_class"):
                found.append(
                    {
                        item.arg: ast.literal_eval(item.value)
                        for item in decorator.keywords
                        if item.arg is not None
                    }
                )
    return found


def test_frozen_values_are_made_one_way() -> None:
    """No frozen dataclass in the package writes its own `__init__` (or turns the generated
    one off): a derived field is set in `__post_init__` (see `codegen/ir.py`)."""
    package = Path(ir.__file__).resolve().parent
    frozen = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            for keywords in _decorator_keywords(node):
                if keywords.get("frozen") is True:
                    where = f"{path.relative_to(package)}: {node.name}"
                    frozen.append(where)
                    assert keywords.get("init", True) is True, where
                    methods = {item.name for item in node.body if isinstance(item, ast.FunctionDef)}
                    assert "__init__" not in methods, where
    assert "render/python/black_layout.py: Sub" in frozen
    assert "load/formats.py: _Layout" in frozen


def test_derived_fields_are_computed_and_not_compared() -> None:
    from codegen.load import formats
    from codegen.render.python import black_layout as fmt

    atom = fmt.Atom("int")
    sub = fmt.Sub("dict", (fmt.Atom("str"), fmt.Union((atom, fmt.Atom("None")))))
    assert sub.text == "dict[str, int | None]"
    assert fmt.Sub("list", (atom,)).text == "list[int]"
    assert dataclasses.replace(sub, head="Mapping").text == "Mapping[str, int | None]"
    assert sub == fmt.Sub("dict", sub.args) and hash(sub) == hash(fmt.Sub("dict", sub.args))
    assert repr(fmt.Union((atom,))) == "Union(arms=(Atom(text='int'),))"
    with pytest.raises(dataclasses.FrozenInstanceError):
        sub.text = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        fmt.Sub("list", (atom,), "list[int]")  # type: ignore[call-arg]
    layout = formats._Layout("mcp", ("name",), ("description",), ("inputSchema",))
    assert layout.fields[:3] == (
        ("name", ("name",), "/name"),
        ("description", ("description",), "/description"),
        ("input_schema", ("inputSchema",), "/inputSchema"),
    )
