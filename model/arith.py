"""The numeric domain of the rules: every number is a Python ``int`` or a symbolic :class:`Sym`.

The rules' arithmetic and comparisons (ATK/DEF after modifiers, damage calculation, battle
damage, LP after costs and damage, LP 0) go through the functions of this module, written once
and evaluated either concretely (plain ``int``: a type check and the Python operator, nothing
else) or over z3 integer terms (``bpcheck prove``, docs/proving.md). This module holds no rule of
the game: only numbers, so the invariants may use the same neutral operations on the numbers
they read from observations without calling the model's rules.

- Anything that is not a :class:`Sym` takes the plain Python operator, exactly as before (one
  class check per operand): concrete exploration keeps its speed and its behaviour on odd
  engine data.
- Arithmetic (:func:`add`, :func:`sub`, :func:`halve`, :func:`clamp0`, :func:`max_`) never
  branches: on a symbolic value it builds a z3 term (``If`` for max/clamp). A term that
  simplifies to a numeral comes back as a plain ``int``.
- A comparison (:func:`gt`, :func:`ge`, :func:`lt`, :func:`le`, :func:`eq`, :func:`ne`) returns a
  Python ``bool``. On a symbolic value it asks the active :class:`Decider` (set with
  :func:`deciding` by the symbolic explorer, bpcheck.explorers.symbolic), which decides it under
  the current path condition: when both outcomes are feasible the explorer runs the computation
  once per outcome (it *forks*) and each outcome joins its path condition. Without a decider a
  symbolic comparison raises :class:`SymbolicValueError`: nothing ever picks a value silently.
- A :class:`Sym` refuses Python's own comparisons and truth value (``<``, ``if x``, ``max``):
  a code path that was not written with this module fails loudly instead of deciding wrongly.
  ``==`` on two :class:`Sym` is *structural* (same term), which is what hashing states and
  observations needs; the semantic equality of numbers is :func:`eq`.

z3 is imported on first use of a symbolic value only, so concrete runs never load it.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Protocol

import z3

Num = Any  # int | Sym

_z3 = None


def z3mod():
    """The z3 module, imported on first use."""
    global _z3
    if _z3 is None:
        _z3 = z3
    return _z3


class SymbolicValueError(Exception):
    """A symbolic number reached code that cannot handle it: a plain Python comparison or truth
    test, or a comparison with no :class:`Decider` active (outside ``bpcheck prove``). Not a
    TypeError on purpose: the checkers' guards must not mistake it for bad engine data."""


class Sym:
    """A symbolic integer: a z3 integer term, with bounds ``lo`` / ``hi`` known from the ranges
    (None: unbounded). The bounds are sound facts (a symbol's range holds on every path), so
    arithmetic carries them and a comparison they decide needs no solver. Hashable,
    structurally comparable, immutable."""

    __slots__ = ("term", "_hash", "lo", "hi")

    def __init__(self, term, lo: int | None = None, hi: int | None = None) -> None:
        self.term = term
        self._hash = term.hash()
        self.lo = lo
        self.hi = hi

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:  # structural; arith.eq is the semantic one
        return isinstance(other, Sym) and self.term.eq(other.term)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __add__(self, o):
        return add(self, o)

    def __radd__(self, o):
        return add(o, self)

    def __sub__(self, o):
        return sub(self, o)

    def __rsub__(self, o):
        return sub(o, self)

    def __neg__(self):
        return sub(0, self)

    def _refuse(self, *_a):
        raise SymbolicValueError(
            f"the symbolic number {self} was compared or tested with a plain Python operator; "
            "the rules and invariants compare numbers with bpcheck.model.arith"
        )

    __bool__ = __lt__ = __le__ = __gt__ = __ge__ = __int__ = __index__ = __floordiv__ = __mul__ = _refuse

    def __str__(self) -> str:
        return str(self.term)

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return ("+" if "+" in spec else "") + str(self.term)


def is_sym(x: Any) -> bool:
    return isinstance(x, Sym)


def term(x: Num):
    """The z3 term of a number (a numeral for an int)."""
    if isinstance(x, Sym):
        return x.term
    if isinstance(x, int):
        return z3mod().IntVal(int(x))
    raise TypeError(f"not a number: {x!r}")


def _num(t, lo: int | None = None, hi: int | None = None) -> Num:
    if lo is not None and lo == hi:
        return lo
    z3 = z3mod()
    v = z3.simplify(t)
    if z3.is_int_value(v):
        return v.as_long()
    return Sym(t, lo, hi)  # the term as written: it reads better in reports than its simplified form


def symbol(name: str, lo: int | None = None, hi: int | None = None) -> Sym:
    """A fresh symbolic integer named `name`, known to lie in lo..hi (the caller states its
    range to the solver as well)."""
    return Sym(z3mod().Int(name), lo, hi)


def bounds(x: Num) -> tuple[int | None, int | None]:
    if isinstance(x, Sym):
        return x.lo, x.hi
    if isinstance(x, int):
        return x, x
    return None, None


def _plus(a, b):
    return None if a is None or b is None else a + b


# -- arithmetic (never branches) ---------------------------------------------------------------


def add(a: Num, b: Num) -> Num:
    if a.__class__ is not Sym and b.__class__ is not Sym:
        return a + b
    if b == 0 and b.__class__ is not Sym:
        return a
    if a == 0 and a.__class__ is not Sym:
        return b
    (al, ah), (bl, bh) = bounds(a), bounds(b)
    return _num(term(a) + term(b), _plus(al, bl), _plus(ah, bh))


def sub(a: Num, b: Num) -> Num:
    if a.__class__ is not Sym and b.__class__ is not Sym:
        return a - b
    if b == 0 and b.__class__ is not Sym:
        return a
    (al, ah), (bl, bh) = bounds(a), bounds(b)
    return _num(term(a) - term(b), _plus(al, None if bh is None else -bh), _plus(ah, None if bl is None else -bl))


def halve(a: Num) -> Num:
    """a // 2, rounded down (z3's integer division by a positive number rounds down as well)."""
    if a.__class__ is not Sym:
        return a // 2
    lo, hi = bounds(a)
    return _num(term(a) / 2, None if lo is None else lo // 2, None if hi is None else hi // 2)


def max_(a: Num, b: Num) -> Num:
    if a.__class__ is not Sym and b.__class__ is not Sym:
        return a if a >= b else b
    (al, ah), (bl, bh) = bounds(a), bounds(b)
    if al is not None and bh is not None and al >= bh:
        return a
    if bl is not None and ah is not None and bl >= ah:
        return b
    ta, tb = term(a), term(b)
    lo = None if al is None and bl is None else max(x for x in (al, bl) if x is not None)
    hi = None if ah is None or bh is None else max(ah, bh)
    return _num(z3mod().If(ta >= tb, ta, tb), lo, hi)


def min_(a: Num, b: Num) -> Num:
    if a.__class__ is not Sym and b.__class__ is not Sym:
        return a if a <= b else b
    (al, ah), (bl, bh) = bounds(a), bounds(b)
    if ah is not None and bl is not None and ah <= bl:
        return a
    if bh is not None and al is not None and bh <= al:
        return b
    ta, tb = term(a), term(b)
    lo = None if al is None or bl is None else min(al, bl)
    hi = None if ah is None and bh is None else min(x for x in (ah, bh) if x is not None)
    return _num(z3mod().If(ta <= tb, ta, tb), lo, hi)


def clamp0(a: Num) -> Num:
    """max(a, 0)."""
    if a.__class__ is not Sym:
        return a if a > 0 else 0
    return max_(a, 0)


# -- comparisons (decided; fork under `bpcheck prove`) ------------------------------------------


class Decider(Protocol):
    def decide(self, cond, rule: str | None) -> bool: ...


_decider: Decider | None = None


@contextmanager
def deciding(d: Decider) -> Iterator[Decider]:
    """Make `d` decide every symbolic comparison made inside the block."""
    global _decider
    prev, _decider = _decider, d
    try:
        yield d
    finally:
        _decider = prev


def decide(cond, rule: str | None = None) -> bool:
    """Decide a z3 Boolean term: a constant at once, otherwise by the active decider."""
    z3 = z3mod()
    c = z3.simplify(cond)
    if z3.is_true(c):
        return True
    if z3.is_false(c):
        return False
    if _decider is None:
        raise SymbolicValueError(
            f"the rules compared symbolic numbers ({cond}) outside `bpcheck prove`: a symbolic board is proved, "
            "or concretized first (`bpcheck prove --concretize DIR`)"
        )
    return _decider.decide(cond, rule)


def _le_known(a: Num, b: Num) -> bool | None:
    """a <= b when the bounds decide it, else None."""
    (al, ah), (bl, bh) = bounds(a), bounds(b)
    if ah is not None and bl is not None and ah <= bl:
        return True
    if al is not None and bh is not None and al > bh:
        return False
    return None


def _lt_known(a: Num, b: Num) -> bool | None:
    (al, ah), (bl, bh) = bounds(a), bounds(b)
    if ah is not None and bl is not None and ah < bl:
        return True
    if al is not None and bh is not None and al >= bh:
        return False
    return None


def gt(a: Num, b: Num, rule: str | None = None) -> bool:
    if a.__class__ is not Sym and b.__class__ is not Sym:
        return a > b
    k = _lt_known(b, a)
    return k if k is not None else decide(term(a) > term(b), rule)


def ge(a: Num, b: Num, rule: str | None = None) -> bool:
    if a.__class__ is not Sym and b.__class__ is not Sym:
        return a >= b
    k = _le_known(b, a)
    return k if k is not None else decide(term(a) >= term(b), rule)


def lt(a: Num, b: Num, rule: str | None = None) -> bool:
    if a.__class__ is not Sym and b.__class__ is not Sym:
        return a < b
    k = _lt_known(a, b)
    return k if k is not None else decide(term(a) < term(b), rule)


def le(a: Num, b: Num, rule: str | None = None) -> bool:
    if a.__class__ is not Sym and b.__class__ is not Sym:
        return a <= b
    k = _le_known(a, b)
    return k if k is not None else decide(term(a) <= term(b), rule)


def eq(a: Num, b: Num, rule: str | None = None) -> bool:
    """Numeric equality (``None`` equals only ``None``)."""
    if a.__class__ is not Sym and b.__class__ is not Sym:
        return a == b
    if a is None or b is None:
        return False
    if a.__class__ is Sym and b.__class__ is Sym and a.term.eq(b.term):
        return True
    if _lt_known(a, b) or _lt_known(b, a):
        return False
    return decide(term(a) == term(b), rule)


def ne(a: Num, b: Num, rule: str | None = None) -> bool:
    return not eq(a, b, rule)


# -- values in data ----------------------------------------------------------------------------


def substitute(x: Any, values: dict[str, int]) -> Any:
    """`x` (nested dicts, lists, tuples, numbers) with every symbol given its value: a
    symbolic observation or event data made concrete for a witness."""
    if isinstance(x, Sym):
        z3 = z3mod()
        subs = [(z3.Int(k), z3.IntVal(v)) for k, v in values.items()]
        return _num(z3.substitute(x.term, *subs))
    if isinstance(x, dict):
        return {k: substitute(v, values) for k, v in x.items()}
    if isinstance(x, list):
        return [substitute(v, values) for v in x]
    if isinstance(x, tuple):
        return tuple(substitute(v, values) for v in x)
    return x


def jsonable(x: Any, sexpr: bool = False) -> Any:
    """`x` with every symbolic number written as its term's text (reports), or as z3's
    S-expression (`sexpr`: fingerprints, much faster)."""
    if isinstance(x, Sym):
        return f"<{x.term.sexpr() if sexpr else x.term}>"
    if isinstance(x, dict):
        return {k: jsonable(v, sexpr) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v, sexpr) for v in x]
    return x


def has_sym(x: Any) -> bool:
    if isinstance(x, Sym):
        return True
    if isinstance(x, dict):
        return any(has_sym(v) for v in x.values())
    if isinstance(x, (list, tuple)):
        return any(has_sym(v) for v in x)
    return False
