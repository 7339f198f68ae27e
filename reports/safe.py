"""Text from an engine or a board (card names, messages, labels) made safe for the formats that
cannot hold every character: XML 1.0 (JUnit, Graphviz HTML-like labels, SVG) rejects most
control characters even when escaped, so they are written as visible ``\\xNN`` escapes."""

from __future__ import annotations

import re

# Characters XML 1.0 cannot hold at all (even escaped): C0 controls but tab, newline and
# carriage return, lone surrogates, U+FFFE and U+FFFF.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """`text` with every character XML 1.0 cannot hold written as ``\\xNN`` (or ``\\uNNNN``)."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text)


__all__ = ["xml_safe"]
