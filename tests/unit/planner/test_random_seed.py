"""setseed()'s session state: the random() calls bound after it get seeds that repeat
when the same seed is set again, and call numbers that never do."""

from __future__ import annotations

import pytest

from planner import errors, functions, session_info
from planner import types as T
from planner.expr import Call, Func, Literal
from planner.math_rules import bind_setseed


def _bind_random(state):
    token = session_info.SESSION_INFO.set({"random": state})
    try:
        return functions.bind_call(Func.RANDOM, [])
    finally:
        session_info.SESSION_INFO.reset(token)


def test_unseeded_random_has_no_arguments():
    assert _bind_random(session_info.RandomSeed()) == Call(Func.RANDOM, (), T.FLOAT8)
    assert _bind_random(None) == Call(Func.RANDOM, (), T.FLOAT8)


def test_seeded_calls_repeat_after_the_same_seed():
    state = session_info.RandomSeed()
    token = session_info.SESSION_INFO.set({"random": state})
    try:
        bind_setseed([Literal(0.5, T.FLOAT8)])
        first = [functions.bind_call(Func.RANDOM, []) for _ in range(3)]
        bind_setseed([Literal(0.5, T.FLOAT8)])
        again = [functions.bind_call(Func.RANDOM, []) for _ in range(3)]
        bind_setseed([Literal(-0.5, T.FLOAT8)])
        other = functions.bind_call(Func.RANDOM, [])
    finally:
        session_info.SESSION_INFO.reset(token)
    seeds = [c.args[0].value for c in first]
    assert len(set(seeds)) == 3 and seeds == [c.args[0].value for c in again]
    assert other.args[0].value not in seeds
    numbers = [c.args[1].value for c in first + again + [other]]
    assert len(set(numbers)) == len(numbers)  # each bound call draws its own sequence


@pytest.mark.parametrize("value", [1.5, -2.0, float("nan")])
def test_setseed_range(value):
    with pytest.raises(errors.InvalidParameterValue, match="out of allowed range"):
        bind_setseed([Literal(value, T.FLOAT8)])


def test_setseed_needs_a_session():
    token = session_info.SESSION_INFO.set({})  # other tests may leave a session's here
    try:
        with pytest.raises(errors.FeatureNotSupported):
            bind_setseed([Literal(0.5, T.FLOAT8)])
    finally:
        session_info.SESSION_INFO.reset(token)
