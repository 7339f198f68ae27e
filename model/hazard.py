"""Which characters of outside text are hazardous, and the visible escapes shown instead.

Text from a file or an engine (card names, labels, messages) may hold controls, invisible or
bidirectional formatting characters and lone surrogates. The model's readers refuse them in
names and prose (:func:`bpcheck.model.fields.check_text`) and quote any value in a message with
them escaped (:func:`bpcheck.model.fields.show`, :func:`~bpcheck.model.fields.field_path`), so an
:class:`~bpcheck.errors.InputError` is safe to print whoever prints it; every output escapes the
same characters at its own boundary (:mod:`bpcheck.reports.safe`, the terminal writer in
:mod:`bpcheck.reports.terminal`). The definition lives here, under both, because the model must
not import the reports.
"""

from __future__ import annotations

import re

# Characters that must never be shown raw, whatever the output (docs/reports.md, "Text from files
# and engines"): every control (C0, DEL, C1), every invisible formatting character (Unicode
# category Cf: zero-width, bidirectional embeddings, overrides and isolates, the Arabic letter
# mark, tag characters, ...), the line and paragraph separators, lone surrogates (text no UTF-8
# file can hold) and the noncharacters U+FFFE / U+FFFF. Written out as ranges (Unicode 14, the
# categories Cc, Cf, Cs, Zl, Zp) so the output never depends on the Python version's tables.
HAZARD_RANGES = (
    (0x00, 0x1F), (0x7F, 0x9F), (0xAD, 0xAD), (0x600, 0x605), (0x61C, 0x61C), (0x6DD, 0x6DD),
    (0x70F, 0x70F), (0x890, 0x891), (0x8E2, 0x8E2), (0x180E, 0x180E), (0x200B, 0x200F),
    (0x2028, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F), (0xD800, 0xDFFF), (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB), (0xFFFE, 0xFFFF), (0x110BD, 0x110BD), (0x110CD, 0x110CD), (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001), (0xE0020, 0xE007F),
)


def hazard_class(keep: str = "") -> "re.Pattern[str]":
    parts = []
    for lo, hi in HAZARD_RANGES:
        parts.append(re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}")
    cls = "".join(parts)
    if keep:  # characters of the class that this output keeps (newline and tab in multi-line text)
        return re.compile(f"(?![{re.escape(keep)}])[{cls}]")
    return re.compile(f"[{cls}]")


HAZARD = hazard_class()  # everything: text shown on one line
HAZARD_BUT_LINES = hazard_class("\n\t")  # multi-line text: newline and tab are layout


def escape_char(c: str) -> str:
    """One character as a visible escape: ``\\x1b``, ``\\u202e``, ``\\U000e0041``."""
    n = ord(c)
    if n < 0x100:
        return f"\\x{n:02x}"
    if n < 0x10000:
        return f"\\u{n:04x}"
    return f"\\U{n:08x}"


def _esc(m: re.Match) -> str:
    return escape_char(m.group())


def visible(s: str, lines: bool = False) -> str:
    """`s` with every hazardous character (:data:`HAZARD_RANGES`) written as a visible escape;
    with `lines`, newline and tab are kept (multi-line text)."""
    return (HAZARD_BUT_LINES if lines else HAZARD).sub(_esc, s)


__all__ = [
    "HAZARD",
    "HAZARD_BUT_LINES",
    "HAZARD_RANGES",
    "escape_char",
    "hazard_class",
    "visible",
]
