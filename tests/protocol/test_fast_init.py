"""``fast_init``: every wire class builds exactly what its dataclass ``__init__`` would."""

import dataclasses
import inspect
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.messages import client, server, values
from protocol.messages.spec import Wire, fast_init, has_fast_init


def wire_classes() -> list[type[Wire]]:
    """Every wire dataclass the protocol defines (messages and nested values)."""
    found = {
        obj
        for module in (client, server, values)
        for obj in vars(module).values()
        if isinstance(obj, type) and issubclass(obj, Wire) and dataclasses.is_dataclass(obj)
    }
    return sorted(found, key=lambda c: c.__qualname__)


WIRE_CLASSES = wire_classes()


def dataclass_signature(cls: type) -> list[tuple[str, object]]:
    """The (name, default) parameters the dataclass ``__init__`` of ``cls`` takes."""
    return [(f.name, f.default) for f in dataclasses.fields(cls)]


def test_there_are_wire_classes_to_check() -> None:
    names = {cls.__name__ for cls in WIRE_CLASSES}
    assert {"Move", "Moved", "YourTurn", "Clocks", "MatchEnd", "Hello"} <= names


@pytest.mark.parametrize("cls", WIRE_CLASSES, ids=lambda c: c.__name__)
def test_every_wire_class_has_the_fast_init_with_the_dataclass_signature(cls: type) -> None:
    assert has_fast_init(cls)
    params = list(inspect.signature(cls).parameters.values())
    assert [(p.name, p.default) for p in params] == [
        (name, inspect.Parameter.empty if default is dataclasses.MISSING else default)
        for name, default in dataclass_signature(cls)
    ]
    assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params)


# Any values will do: construction does not validate (parsing does).
any_values = st.one_of(st.integers(), st.text(max_size=5), st.none(), st.tuples(st.integers()))


@pytest.mark.parametrize("cls", WIRE_CLASSES, ids=lambda c: c.__name__)
@given(data=st.data())
def test_fast_init_sets_every_field_positionally_by_keyword_or_by_default(
    cls: type, data: st.DataObject
) -> None:
    fields = dataclasses.fields(cls)
    given_values = {f.name: data.draw(any_values, label=f.name) for f in fields}
    by_position = cls(*given_values.values())
    by_keyword = cls(**given_values)
    for f in fields:
        assert getattr(by_position, f.name) is given_values[f.name]
    assert by_position == by_keyword
    assert pickle.loads(pickle.dumps(by_keyword)) == by_keyword

    required = {f.name: given_values[f.name] for f in fields if f.default is dataclasses.MISSING}
    defaulted = cls(**required)
    for f in fields:
        expected = given_values[f.name] if f.name in required else f.default
        assert getattr(defaulted, f.name) is expected


@pytest.mark.parametrize("cls", WIRE_CLASSES, ids=lambda c: c.__name__)
def test_fast_init_refuses_what_the_dataclass_init_refuses_and_stays_frozen(cls: type) -> None:
    fields = dataclasses.fields(cls)
    args = [0] * len(fields)
    with pytest.raises(TypeError):
        cls(*args, 0)  # one argument too many
    with pytest.raises(TypeError):
        cls(*args, no_such_field=1)
    if any(f.default is dataclasses.MISSING for f in fields):
        with pytest.raises(TypeError):
            cls()  # required fields missing
    obj = cls(*args)
    if fields:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, fields[0].name, 1)
    with pytest.raises((AttributeError, TypeError)):
        obj.not_a_field = 1  # slots: no instance dict


def test_fast_init_wants_a_frozen_dataclass_with_slots_and_plain_fields() -> None:
    @dataclasses.dataclass(frozen=True)
    class NoSlots(Wire):
        a: int

    @dataclasses.dataclass(slots=True)
    class NotFrozen(Wire):
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Factory(Wire):
        a: list[int] = dataclasses.field(default_factory=list)

    for cls in (NoSlots, NotFrozen, Factory):
        with pytest.raises(TypeError):
            fast_init(cls)
