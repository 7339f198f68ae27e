"""The numeric domain (bpcheck.model.arith): plain ints behave exactly as Python's operators;
symbolic numbers refuse plain comparisons and are decided only under a decider."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpcheck.model import arith

ints = st.integers(min_value=-10_000, max_value=10_000)


@given(ints, ints)
def test_concrete_operations_are_pythons(a, b):
    assert arith.add(a, b) == a + b and type(arith.add(a, b)) is int
    assert arith.sub(a, b) == a - b
    assert arith.halve(a) == a // 2
    assert arith.clamp0(a) == max(a, 0)
    assert arith.max_(a, b) == max(a, b) and arith.min_(a, b) == min(a, b)
    assert (arith.gt(a, b), arith.ge(a, b), arith.lt(a, b), arith.le(a, b)) == (a > b, a >= b, a < b, a <= b)
    assert (arith.eq(a, b), arith.ne(a, b)) == (a == b, a != b)


def test_symbolic_numbers_refuse_python_comparisons():
    x = arith.symbol("x", 0, 100)
    for bad in (lambda: x < 3, lambda: bool(x), lambda: max(x, 0), lambda: x // 2):
        with pytest.raises(arith.SymbolicValueError):
            bad()


def test_a_symbolic_comparison_needs_a_decider():
    x = arith.symbol("x", 0, 100)
    with pytest.raises(arith.SymbolicValueError, match="outside `bpcheck prove`"):
        arith.gt(x, 50)


def test_bounds_decide_what_they_can_without_a_solver():
    x = arith.symbol("x", 100, 3000)
    assert arith.gt(x, 0) and arith.le(x, 3000) and not arith.lt(x, 100)
    assert arith.clamp0(x) is x  # x >= 100: no If term
    d = arith.sub(x, 50)
    assert (d.lo, d.hi) == (50, 2950)
    assert arith.sub(x, x) == 0 and type(arith.sub(x, x)) is int  # simplifies to a numeral


def test_decider_sees_the_comparison_and_its_rule():
    seen = []

    class D:
        def decide(self, cond, rule):
            seen.append((str(cond), rule))
            return False

    x, y = arith.symbol("x", 0, 10), arith.symbol("y", 0, 10)
    with arith.deciding(D()):
        assert arith.gt(x, y, "DS-CALC-ATK-ATK") is False
    assert seen == [("x > y", "DS-CALC-ATK-ATK")]


def test_substitute_makes_data_concrete():
    x = arith.symbol("x", 0, 10)
    data = {"lp": arith.sub(8000, x), "list": [x, 3], "t": (x,)}
    assert arith.substitute(data, {"x": 7}) == {"lp": 7993, "list": [7, 3], "t": (7,)}
    assert arith.has_sym(data) and not arith.has_sym(arith.substitute(data, {"x": 1}))
