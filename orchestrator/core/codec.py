"""The one codec of the project's data: msgspec, with the project's own types (system
options, time controls, paths), and its errors turned into one line a person can act on.

Every declared schema (the event's rules, `engines.toml`, the state JSON, the stored
settings) is a msgspec `Struct`; `convert` checks decoded data (TOML, JSON) against it,
`to_builtins` gives it back as plain data, and `json_schema` publishes it.  A
`SchemaError` names the key that is wrong (`path`) and what is wrong with it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import msgspec.inspect as mi

from orchestrator.core.errors import OrchestratorError
from orchestrator.core.event.parts import Options
from orchestrator.core.game.clock import TimeControl, TimeControlError

__all__ = [
    "Key",
    "SchemaError",
    "convert",
    "decode_json",
    "json_schema",
    "parse_json",
    "show_path",
    "to_builtins",
]

T = TypeVar("T")
#: a key down to a value: a name in an object, an index in a list
Key = str | int


class SchemaError(OrchestratorError, ValueError):
    """Data that does not fit its schema: where (`path`, the keys down to the value) and
    what is wrong (`message`); `unknown` names a key the schema does not know."""

    def __init__(self, path: tuple[Key, ...], message: str, unknown: str | None = None) -> None:
        super().__init__(f"{show_path(path)}: {message}" if path else message)
        self.path = path
        self.message = message
        self.unknown = unknown


def show_path(path: tuple[Key, ...]) -> str:
    """A path as people write it.

    >>> show_path(("rounds", 2, "games", 0, "result"))
    'rounds[2].games[0].result'
    """
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else key)
    return out


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, Options):
        return dict(obj)
    if isinstance(obj, Path | TimeControl):
        return str(obj)
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")


def _dec_hook(kind: type, obj: Any) -> Any:
    if kind is Options:
        if not isinstance(obj, dict):
            raise ValueError(f"expected a table of options, not {_shown(obj)}")
        return Options(obj)
    if kind is TimeControl:
        if not isinstance(obj, str):
            raise ValueError(f'expected a time control such as "10+0.1", not {_shown(obj)}')
        try:
            return TimeControl.parse(obj)
        except TimeControlError as exc:
            raise ValueError(str(exc)) from None
    if kind is Path:
        if not isinstance(obj, str):
            raise ValueError(f"expected a path, not {_shown(obj)}")
        return Path(obj)
    raise NotImplementedError(f"cannot decode {kind.__name__}")


def to_builtins(obj: Any) -> Any:
    """`obj` (Structs, options, time controls, paths) as plain JSON data.

    >>> from orchestrator.core.event.model import Rules
    >>> to_builtins(Rules(system="koth", system_options=Options({"repeats": 1})))["system_options"]
    {'repeats': 1}
    """
    return msgspec.json.decode(msgspec.json.encode(obj, enc_hook=_enc_hook))


def convert(data: Any, kind: type[T]) -> T:
    """`data` (decoded TOML or JSON) as `kind`, checked against its schema; a `SchemaError`
    naming the first key that does not fit.

    >>> from orchestrator.core.event.model import Player
    >>> convert({"name": "A", "seed": 1}, Player)
    Player(name='A', seed=1, withdrawn_after=None)
    >>> convert({"name": "A", "seed": 0}, Player)
    Traceback (most recent call last):
    ...
    orchestrator.core.codec.SchemaError: seed: expected a seed of 1 to 1000000, not 0
    >>> convert({"name": "A"}, Player)
    Traceback (most recent call last):
    ...
    orchestrator.core.codec.SchemaError: missing key 'seed'
    """
    try:
        return msgspec.convert(data, kind, strict=True, dec_hook=_dec_hook)
    except msgspec.ValidationError as exc:
        raise _explain(str(exc), data, kind) from None


def parse_json(text: str | bytes) -> Any:
    """JSON text as plain data; a `SchemaError` for text that is not JSON.

    >>> parse_json('{"name": "A", "seed": 1')
    Traceback (most recent call last):
    ...
    orchestrator.core.codec.SchemaError: malformed JSON: Input data was truncated
    """
    try:
        return msgspec.json.decode(text)
    except msgspec.DecodeError as exc:
        raise SchemaError((), f"malformed JSON: {str(exc).split(' - at ')[0]}") from None
    except RecursionError:
        raise SchemaError((), "malformed JSON: nested too deeply") from None


def decode_json(text: str | bytes, kind: type[T]) -> T:
    """JSON text as `kind`; a `SchemaError` for text that is not JSON, or does not fit.

    >>> decode_json('{"name": "A", "seed": 1}', dict)
    {'name': 'A', 'seed': 1}
    """
    return convert(parse_json(text), kind)


def json_schema(kind: Any) -> dict[str, Any]:
    """The JSON Schema of `kind`, as editors read it.

    >>> json_schema(Options)
    {'type': 'object', 'description': 'the options of a pairing system'}
    """
    return msgspec.json.schema(kind, schema_hook=_schema_hook)


def _schema_hook(kind: type) -> dict[str, Any]:
    if kind is Options:
        return {"type": "object", "description": "the options of a pairing system"}
    if kind is TimeControl:
        return {
            "type": "string",
            "description": 'a time control: "base+inc", "moves/base+inc", "st=N", '
            '"nodes=N" or "depth=N" (seconds)',
        }
    if kind is Path:
        return {"type": "string", "description": "a path"}
    raise NotImplementedError


_AT = re.compile(r"^(?P<message>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_KEY = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")


def _explain(text: str, data: Any, kind: Any) -> SchemaError:
    """msgspec's `Expected ... - at $.a.b[0]` as a `SchemaError` that shows the value."""
    match = _AT.match(text)
    assert match is not None
    message, raw = match["message"], match["path"] or ""
    path: tuple[Key, ...] = tuple(
        int(index) if index.isdigit() else name or index for name, index in _KEY.findall(raw)
    )
    missing = re.match(r"Object missing required field `(.+)`$", message)
    if missing:
        return SchemaError(path, f"missing key {missing[1]!r}")
    unknown = re.match(r"Object contains unknown field `(.+)`$", message)
    if unknown:
        return SchemaError(path, f"unknown key {unknown[1]!r}", unknown=unknown[1])
    if re.match(r"(Expected|Invalid enum value|Integer value|Number out of range)", message):
        value = _value_at(data, path)
        return SchemaError(path, f"expected {_describe(_type_at(kind, path))}, not {value}")
    return SchemaError(path, message.removeprefix("Expected ").rstrip("."))


def _value_at(data: Any, path: tuple[Key, ...]) -> str:
    for key in path:
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError):
            return "that"
    return _shown(data)


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return "a table"
    text = repr(list(value) if isinstance(value, tuple) else value)
    return text if len(text) <= 60 else text[:57] + "..."


def _type_at(kind: Any, path: tuple[Key, ...]) -> mi.Type:
    info = mi.type_info(kind)
    for key in path:
        info = _step(info, key) or info
    return info


def _step(info: mi.Type, key: Key) -> mi.Type | None:
    if isinstance(info, mi.Metadata):
        return _step(info.type, key)
    if isinstance(info, mi.StructType) and isinstance(key, str):
        return next((f.type for f in info.fields if f.encode_name == key), None)
    if isinstance(info, mi.ListType | mi.VarTupleType | mi.SetType | mi.FrozenSetType):
        return info.item_type
    if isinstance(info, mi.TupleType) and isinstance(key, int) and key < len(info.item_types):
        return info.item_types[key]
    if isinstance(info, mi.DictType):
        return info.value_type
    if isinstance(info, mi.UnionType):
        return next((found for t in info.types if (found := _step(t, key)) is not None), None)
    return None


_CUSTOM: dict[type, str] = {
    Options: "a table of options",
    TimeControl: 'a time control such as "10+0.1"',
    Path: "a path",
}


def _bounds(info: mi.IntType | mi.FloatType) -> str:
    parts = [f"{op} {value:g}" for op, value in ((">=", info.ge), (">", info.gt), ("<=", info.le),
                                                 ("<", info.lt)) if value is not None]  # fmt: skip
    return f" {' and '.join(parts)}" if parts else ""


_DESCRIBE: dict[type, Callable[[Any], str]] = {
    mi.IntType: lambda t: "an integer" + _bounds(t),
    mi.FloatType: lambda t: "a finite number" + _bounds(t),
    mi.StrType: lambda t: "a string",
    mi.BoolType: lambda t: "true or false",
    mi.NoneType: lambda t: "nothing",
    mi.LiteralType: lambda t: "one of " + ", ".join(f'"{v}"' for v in t.values),
    mi.ListType: lambda t: "a list",
    mi.VarTupleType: lambda t: "a list",
    mi.TupleType: lambda t: f"a list of {len(t.item_types)}",
    mi.DictType: lambda t: "a table",
    mi.StructType: lambda t: "a table",
    mi.CustomType: lambda t: _CUSTOM.get(t.cls, t.cls.__name__),
    mi.UnionType: lambda t: " or ".join(
        _describe(x) for x in t.types if not isinstance(x, mi.NoneType)
    ),
}


def _describe(info: mi.Type) -> str:
    """What a value of this type is, in words.

    >>> _describe(mi.type_info(int)), _describe(mi.type_info(bool | None))
    ('an integer', 'true or false')
    """
    if isinstance(info, mi.Metadata):
        described = (info.extra_json_schema or {}).get("description")
        return str(described) if described else _describe(info.type)
    return _DESCRIBE.get(type(info), lambda t: "another value")(info)
