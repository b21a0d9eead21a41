"""The json and jsonb operators and functions over one value, as PostgreSQL 15 computes them.

Each function takes the text of a json or jsonb value (planner/json_values.py says which
text) and plain Python arguments, and returns the result as text (json, jsonb, text) or a
Python value; None is SQL NULL. segment/kernels/expr_json.py calls them once per distinct
argument combination of a batch; planner/fold.py for constants.

json keeps its input text, so extracting from a json value returns the very characters of
the sub-value (`'{"a": [1,  2]}'::json -> 'a'` is `[1,  2]`): `_items` walks one level of
the text with the json module's scanner. jsonb values are parsed to Python values.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal

from planner import errors
from planner.json_values import as_jsonb_object, dump, parse, quote, type_name

_MISSING = object()
_WS = " \t\n\r"
_SCANNER = json.JSONDecoder(parse_float=str, parse_int=str, parse_constant=str,
                            object_pairs_hook=lambda pairs: None)


def _skip(s: str, i: int) -> int:
    while i < len(s) and s[i] in _WS:
        i += 1
    return i


def _items(text: str):
    """One level of a json text: ('object', [(key, sub-text)]), ('array', [sub-text]) or
    ('scalar', text)."""
    i = _skip(text, 0)
    opener = text[i] if i < len(text) else ""
    if opener not in "{[" or not opener:
        return "scalar", text.strip(_WS)
    out = []
    i = _skip(text, i + 1)
    closer = "}" if opener == "{" else "]"
    while text[i] != closer:
        key = None
        if opener == "{":
            key, i = _SCANNER.raw_decode(text, i)
            i = _skip(text, _skip(text, i) + 1)  # the colon
        start = i
        _, i = _SCANNER.raw_decode(text, i)
        out.append((key, text[start:i]) if opener == "{" else text[start:i])
        i = _skip(text, i)
        if text[i] == ",":
            i = _skip(text, i + 1)
    return ("object" if opener == "{" else "array"), out


def _json_scalar(sub: str):
    """A json scalar's Python value (strings decoded, numbers as Decimal)."""
    return parse(sub) if sub[:1] in '"tfn' else Decimal(sub) if sub[:1] not in "[{" else sub


# --- -> ->> #> #>> -----------------------------------------------------------------------------
def _index(n: int, i: int) -> int | None:
    j = i + n if i < 0 else i
    return j if 0 <= j < n else None


def _jsonb_step(v, step, top: bool):
    if isinstance(step, str):
        return v.get(step, _MISSING) if isinstance(v, dict) else _MISSING
    if isinstance(v, list):
        j = _index(len(v), step)
        return _MISSING if j is None else v[j]
    if top and not isinstance(v, dict) and _index(1, step) is not None:
        return v  # a scalar is a one-element pseudo array to -> (PostgreSQL 15)
    return _MISSING


def _json_step(text: str, step):
    kind, items = _items(text)
    if isinstance(step, str):
        if kind != "object":
            return _MISSING
        found = _MISSING
        for k, sub in items:  # the last of repeated keys wins
            if k == step:
                found = sub
        return found
    if kind != "array":
        return _MISSING
    j = _index(len(items), step)
    return _MISSING if j is None else items[j]


def _finish(found, jsonb: bool, as_text: bool):
    if found is _MISSING:
        return None
    if jsonb:
        if as_text:
            return None if found is None else found if isinstance(found, str) else dump(found)
        return dump(found)
    if as_text:
        if found[:1] == '"':
            return parse(found)
        return None if found == "null" else found
    return found


def get(text: str, step, jsonb: bool, as_text: bool):
    """x -> key, x -> index (negative from the end), and ->> (as text)."""
    found = _jsonb_step(parse(text), step, True) if jsonb else _json_step(text, step)
    return _finish(found, jsonb, as_text)


def _path_step(step: str):
    """A path element read as an array subscript when it is an integer."""
    try:
        return int(step.strip())
    except ValueError:
        return None


def get_path(text: str, path: tuple, jsonb: bool, as_text: bool):
    """x #> path, x #>> path, json(b)_extract_path(_text): NULL when a step is missing or
    NULL, the value itself for an empty path."""
    found = parse(text) if jsonb else text
    for step in path:
        if step is None:
            return None
        if jsonb:
            if isinstance(found, dict):
                found = found.get(step, _MISSING)
            elif isinstance(found, list) and _path_step(step) is not None:
                j = _index(len(found), _path_step(step))
                found = _MISSING if j is None else found[j]
            else:
                found = _MISSING
        else:
            kind = _items(found)[0]
            key = step if kind == "object" else _path_step(step)
            found = _MISSING if key is None else _json_step(found, key)
        if found is _MISSING:
            return None
    if not path and not jsonb and as_text:
        return _finish(text.strip(_WS), False, True)
    return _finish(found, jsonb, as_text)


# --- inspection ---------------------------------------------------------------------------
def typeof(text: str, jsonb: bool) -> str:
    if jsonb:
        return type_name(parse(text))
    kind, items = _items(text)
    if kind != "scalar":
        return kind
    return type_name(_json_scalar(items))


def array_length(text: str, jsonb: bool) -> int:
    if jsonb:
        v = parse(text)
        if isinstance(v, list):
            return len(v)
        scalar = not isinstance(v, dict)
    else:
        kind, items = _items(text)
        if kind == "array":
            return len(items)
        scalar = kind == "scalar"
    raise errors.InvalidParameterValue(
        f"cannot get array length of a {'scalar' if scalar else 'non-array'}")


def elements(text: str, jsonb: bool, as_text: bool) -> list:
    """json(b)_array_elements(_text): the elements, each as json(b) or text."""
    if jsonb:
        v = parse(text)
        if not isinstance(v, list):
            raise errors.InvalidParameterValue(
                f"cannot extract elements from {'an object' if isinstance(v, dict) else 'a scalar'}")
        return [_finish(x, True, as_text) for x in v]
    kind, items = _items(text)
    if kind != "array":
        name = "json_array_elements_text" if as_text else "json_array_elements"
        raise errors.InvalidParameterValue(
            f"cannot call {name} on {'a non-array' if kind == 'object' else 'a scalar'}")
    return [_finish(x, False, as_text) for x in items]


def each(text: str, jsonb: bool, as_text: bool) -> list[tuple]:
    """json(b)_each(_text): (key, value) pairs."""
    if jsonb:
        v = parse(text)
        if not isinstance(v, dict):
            raise errors.InvalidParameterValue(
                f"cannot call {'jsonb_each_text' if as_text else 'jsonb_each'} on a non-object")
        return [(k, _finish(x, True, as_text)) for k, x in v.items()]
    kind, items = _items(text)
    if kind != "object":
        raise errors.InvalidParameterValue(
            "cannot deconstruct an array as an object" if kind == "array"
            else "cannot deconstruct a scalar")
    return [(k, _finish(x, False, as_text)) for k, x in items]


def record_field(text: str | None, key: str, many: bool, jsonb: bool, as_text: bool,
                 name: str, default=None, convert=None) -> list:
    """Column `key` of json(b)_to_record (many: of json(b)_to_recordset) over x: its value
    in each row, as json(b) or as text (a string's characters), passed through `convert`
    when given; None for JSON null, `default` (the base record's field of
    json(b)_populate_record, as text or json) for a missing key. A NULL x is one row of
    the defaults (record) or no rows (recordset)."""
    if text is None:
        return [] if many else [default]
    finish = _finish if convert is None else (
        lambda f, jsonb, as_text: convert(_finish(f, jsonb, as_text)))
    if jsonb:
        v = parse(text)
        kind = "object" if isinstance(v, dict) else "array" if isinstance(v, list) else "scalar"
        rows = v if many and kind == "array" else [v]
        if (many and kind != "array") or any(not isinstance(r, dict) for r in rows):
            raise _record_shape(name, many, kind)
        found = [r.get(key, _MISSING) for r in rows]
        return [default if f is _MISSING else None if f is None else finish(f, True, as_text)
                for f in found]
    kind, items = _items(text)
    if many and kind == "array":
        rows = [_items(sub) for sub in items]
    else:
        rows = [(kind, items)]
    if (many and kind != "array") or any(k != "object" for k, _ in rows):
        raise _record_shape(name, many, kind)
    out = []
    for _, pairs in rows:
        found = None
        for k, sub in pairs:  # the last of repeated keys wins, as in PostgreSQL
            if k == key:
                found = sub
        out.append(default if found is None else None if found == "null" else
                   finish(found, False, as_text))
    return out


def array_literal(value: str, key: str, elem_json: bool) -> str:
    """A field's JSON text read into an array column, as PostgreSQL's populate_array
    reads it: a string is the array's text as written (`"{1,2}"`), an array the array of
    its elements (a string's characters, else its JSON text; for json(b) elements the
    JSON text), as array_in's text; anything else is 22P02 `expected JSON array`. A
    nested array (a multidimensional one) is 0A000."""
    kind, items = _items(value)
    if kind == "scalar" and value.lstrip(_WS)[:1] == '"':
        return parse(value)
    if kind != "array":
        raise errors.QueryError("expected JSON array", "22P02",
                                hint=f'See the value of key "{key}".')
    out = []
    for sub in items:
        sub = sub.strip(_WS)
        if sub == "null":
            out.append("NULL")
            continue
        if sub[:1] == "[" and not elem_json:
            raise errors.FeatureNotSupported(
                f'multidimensional arrays (the JSON array of key "{key}" holds arrays)')
        text = sub if elem_json or sub[:1] != '"' else parse(sub)
        out.append('"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"')
    return "{" + ",".join(out) + "}"


def _record_shape(name: str, many: bool, kind: str) -> errors.QueryError:
    """PostgreSQL's words for json(b)_to_record(set) over a value of the wrong shape."""
    if not many:
        return errors.InvalidParameterValue(
            f"cannot call populate_composite on {'an array' if kind == 'array' else 'a scalar'}")
    if kind != "array":
        what = "a non-array" if name.startswith("jsonb") else (
            "an object" if kind == "object" else "a scalar")
        return errors.InvalidParameterValue(f"cannot call {name} on {what}")
    return errors.InvalidParameterValue(f"argument of {name} must be an array of objects")


def object_keys(text: str, jsonb: bool) -> list[str]:
    if jsonb:
        v = parse(text)
        if not isinstance(v, dict):
            raise errors.InvalidParameterValue(
                f"cannot call jsonb_object_keys on {'an array' if isinstance(v, list) else 'a scalar'}")
        return list(v)
    kind, items = _items(text)
    if kind != "object":
        raise errors.InvalidParameterValue(
            f"cannot call json_object_keys on {'an array' if kind == 'array' else 'a scalar'}")
    return [k for k, _ in items]


# --- jsonb operators ----------------------------------------------------------------------
def _same(a, b) -> bool:
    """Equality of jsonb scalars (True is not the number 1)."""
    return type(a) is type(b) and a == b


def _contains(a, b) -> bool:
    if isinstance(b, dict):
        if not isinstance(a, dict):
            return False
        for k, y in b.items():
            if k not in a:
                return False
            x = a[k]
            if isinstance(y, (dict, list)):
                if type(x) is not type(y) or not _contains(x, y):
                    return False
            elif not _same(x, y):
                return False
        return True
    if not isinstance(a, list) or not isinstance(b, list):
        return False
    scalars = [x for x in a if not isinstance(x, (dict, list))]
    for y in b:
        if isinstance(y, (dict, list)):
            if not any(type(x) is type(y) and _contains(x, y) for x in a):
                return False
        elif not any(_same(x, y) for x in scalars):
            return False
    return True


def contains(a_text: str, b_text: str) -> bool:
    """a @> b (JsonbDeepContains); a top-level scalar is a one-element array, which an
    array may contain but which contains no array."""
    a, b = parse(a_text), parse(b_text)
    a_scalar, b_scalar = not isinstance(a, (dict, list)), not isinstance(b, (dict, list))
    if a_scalar and not b_scalar:
        return False
    return _contains([a] if a_scalar else a, [b] if b_scalar else b)


def exists(text: str, key: str) -> bool:
    """x ? key: a top-level key, array string element, or the string scalar itself."""
    v = parse(text)
    if isinstance(v, dict):
        return key in v
    if isinstance(v, list):
        return any(isinstance(x, str) and x == key for x in v)
    return isinstance(v, str) and v == key


def exists_any(text: str, keys: tuple) -> bool:
    return any(exists(text, k) for k in keys if k is not None)


def exists_all(text: str, keys: tuple) -> bool:
    return all(exists(text, k) for k in keys if k is not None)


def concat(a_text: str, b_text: str) -> str:
    """a || b: objects merge (b's keys win); otherwise both as arrays, concatenated."""
    a, b = parse(a_text), parse(b_text)
    if isinstance(a, dict) and isinstance(b, dict):
        return dump(as_jsonb_object(list(a.items()) + list(b.items())))
    return dump((a if isinstance(a, list) else [a]) + (b if isinstance(b, list) else [b]))


def delete(text: str, key) -> str:
    """x - key (a text: object key or array string elements; an int: array index)."""
    v = parse(text)
    if not isinstance(v, (dict, list)):
        raise errors.InvalidParameterValue("cannot delete from scalar")
    if isinstance(key, str):
        if isinstance(v, dict):
            return dump({k: x for k, x in v.items() if k != key})
        return dump([x for x in v if not (isinstance(x, str) and x == key)])
    if isinstance(v, dict):
        raise errors.InvalidParameterValue("cannot delete from object using integer index")
    j = _index(len(v), key)
    return dump(v if j is None else v[:j] + v[j + 1:])


def set_path(text: str, path: tuple, new_text: str, create: bool) -> str:
    """jsonb_set(target, path, new_value, create_if_missing)."""
    v = parse(text)
    if not isinstance(v, (dict, list)):
        raise errors.InvalidParameterValue("cannot set path in scalar")
    for i, step in enumerate(path):
        if step is None:
            raise errors.QueryError(f"path element at position {i + 1} is null", "22004")
    if not path:
        return dump(v)
    return dump(_set(v, list(path), parse(new_text), create, 1))


def _set(v, path: list, new, create: bool, level: int):
    step, rest = path[0], path[1:]
    if isinstance(v, dict):
        if step in v:
            out = dict(v)
            out[step] = new if not rest else _set(v[step], rest, new, create, level + 1)
            return out
        if not rest and create:
            return as_jsonb_object(list(v.items()) + [(step, new)])
        return v
    if isinstance(v, list):
        idx = _array_step(step, level)
        j = _index(len(v), idx)
        if j is not None:
            out = list(v)
            out[j] = new if not rest else _set(v[j], rest, new, create, level + 1)
            return out
        if not rest and create:
            return [new] + v if idx < 0 else v + [new]
        return v
    return v


def insert_path(text: str, path: tuple, new_text: str, after: bool) -> str:
    """jsonb_insert(target, path, new_value, insert_after): new_value before (after) the
    array element the path leads to, or under an object key that is not there yet (an
    existing key is 22023); an index past either end inserts at that end; a step missing
    on the way leaves the value as it is (setPath with JB_PATH_INSERT_BEFORE/AFTER)."""
    v = parse(text)
    if not isinstance(v, (dict, list)):
        raise errors.InvalidParameterValue("cannot set path in scalar")
    if not path:
        return dump(v)
    return dump(_insert(v, path, parse(new_text), after, 0))


def _insert(v, path: tuple, new, after: bool, level: int):
    step = path[level]
    if step is None:
        raise errors.QueryError(f"path element at position {level + 1} is null", "22004")
    last = level == len(path) - 1
    if isinstance(v, dict):
        if step in v:
            if last:
                raise errors.InvalidParameterValue(
                    "cannot replace existing key",
                    hint="Try using the function jsonb_set to replace key value.")
            out = dict(v)
            out[step] = _insert(v[step], path, new, after, level + 1)
            return out
        return as_jsonb_object(list(v.items()) + [(step, new)]) if last else v
    if isinstance(v, list):
        n, idx = len(v), _array_step(step, level + 1)
        if idx < 0:
            if -idx > n:  # before the first element
                return [new] + v if last else v
            idx += n
        if idx >= n:  # past the end (or into an empty array)
            return v + [new] if last else v
        if not last:
            return v[:idx] + [_insert(v[idx], path, new, after, level + 1)] + v[idx + 1:]
        at = idx + 1 if after else idx
        return v[:at] + [new] + v[at:]
    return v


def delete_path(text: str, path: tuple) -> str:
    """x #- path (jsonb_delete_path): the value without the element the path leads to; a
    missing step leaves it as it is. PostgreSQL's checks in its order: a scalar is 22023
    (also for an empty path), an empty container comes back whatever the path, a NULL
    step is 22004 and an array step that is no integer 22P02 when reached."""
    v = parse(text)
    if not isinstance(v, (dict, list)):
        raise errors.InvalidParameterValue("cannot delete path in scalar")
    if not v or not path:
        return dump(v)
    return dump(_delete(v, path, 0))


def _delete(v, path: tuple, level: int):
    step = path[level]
    if step is None:
        raise errors.QueryError(f"path element at position {level + 1} is null", "22004")
    last = level == len(path) - 1
    if isinstance(v, dict):
        if step not in v:
            return v
        if last:
            return {k: x for k, x in v.items() if k != step}
        out = dict(v)
        out[step] = _delete(v[step], path, level + 1)
        return out
    if isinstance(v, list):
        j = _index(len(v), _array_step(step, level + 1))
        if j is None:
            return v
        if last:
            return v[:j] + v[j + 1:]
        out = list(v)
        out[j] = _delete(v[j], path, level + 1)
        return out
    return v


_STRTOINT = re.compile(r"[ \t\n\r\v\f]*[+-]?[0-9]+")


def _array_step(step: str, position: int) -> int:
    """A path step into an array (jsonb_set, #-): the whole text read as C's strtoint
    does (leading white space, a sign, digits; an int4), else 22P02."""
    if _STRTOINT.fullmatch(step) and -2**31 <= int(step) < 2**31:
        return int(step)
    raise errors.InvalidTextRepresentation(
        f'path element at position {position} is not an integer: "{step}"')


def strip_nulls(text: str) -> str:
    """jsonb_strip_nulls: object fields that are null go, at every depth."""
    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if x is not None}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v
    return dump(strip(parse(text)))


def json_strip_nulls(text: str) -> str:
    """json_strip_nulls: object fields whose value is null go, at every depth; the rest
    written as PostgreSQL's semantic actions write it: no white space, keys and strings
    escaped again (escape_json), other scalars as written, key order and repeated keys
    kept (array elements that are null stay)."""
    kind, items = _items(text)
    if kind == "scalar":
        return quote(parse(items)) if items.startswith('"') else items
    if kind == "array":
        return "[" + ",".join(json_strip_nulls(sub) for sub in items) + "]"
    return "{" + ",".join(f"{quote(k)}:{json_strip_nulls(sub)}" for k, sub in items
                          if sub.strip(_WS) != "null") + "}"


def pretty(text: str) -> str:
    """jsonb_pretty: four spaces a level; empty containers still take two lines."""
    def out(v, level: int) -> str:
        pad = "    " * (level + 1)
        if isinstance(v, dict):
            body = ",\n".join(f"{pad}{quote(k)}: {out(x, level + 1)}" for k, x in v.items())
            return "{\n" + body + ("\n" if body else "") + "    " * level + "}"
        if isinstance(v, list):
            body = ",\n".join(pad + out(x, level + 1) for x in v)
            return "[\n" + body + ("\n" if body else "") + "    " * level + "]"
        return dump(v)
    return out(parse(text), 0)


# --- constructors -------------------------------------------------------------------------
def build_object(parts: list, jsonb: bool, name: str) -> str:
    """json(b)_build_object over (key text, value's JSON text) per argument pair; keys
    are the keys' text output."""
    if len(parts) % 2:
        raise errors.InvalidParameterValue(
            "argument list must have even number of elements",
            hint=f"The arguments of {name}() must consist of alternating keys and values.")
    keys, vals = parts[0::2], parts[1::2]
    for i, k in enumerate(keys):
        if k is None:  # the two functions word it differently
            if jsonb:
                raise errors.InvalidParameterValue(f"argument {2 * i + 1}: key must not be null")
            raise errors.InvalidParameterValue(f"argument {2 * i + 1} cannot be null",
                                               hint="Object keys should be text.")
    if jsonb:
        return dump(as_jsonb_object((k, parse(v)) for k, v in zip(keys, vals)))
    return "{" + ", ".join(f"{quote(k)} : {v}" for k, v in zip(keys, vals)) + "}"


def build_array(parts: list, jsonb: bool) -> str:
    if jsonb:
        return dump([parse(v) for v in parts])
    return "[" + ", ".join(parts) + "]"
