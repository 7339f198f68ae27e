"""Text from an engine or a file, made safe for each output format (docs/reports.md, "Text from
files and engines").

Every string an engine sends (card names, action labels, messages, reasons, event data) is
untrusted input, like a file: it may hold a newline followed by a line GitHub Actions reads as a
workflow command, terminal escape sequences, bidirectional overrides, NUL, lone surrogates,
markup. Each output escapes it *at its own boundary*, with the helper for its format here:

=================  ===========================================================================
terminal           :func:`line` / :func:`one_line` for a field printed on one line (newlines
                   shown as ``\\x0a``); everything printed also goes through the escaping
                   writer (:func:`bpcheck.reports.terminal.output_escaping`): controls and
                   invisible characters as visible escapes, no line that starts a workflow
                   command
GitHub commands    :func:`gh_data` / :func:`gh_property` (the runner's ``%0A`` escaping)
HTML               :func:`html_text`
XML (JUnit, SVG)   :func:`xml_safe` (a tree: :func:`xml_safe_tree`)
DOT                bpcheck.reports.graphviz (HTML-like labels through :func:`xml_safe`)
JSON, SARIF, ITF   :func:`json_text` (data kept exactly: JSON escapes); SARIF's message texts
                   also through :func:`visible`
Markdown           :func:`md_text` (prose) and :func:`md_code` (a code span)
=================  ===========================================================================

"Visible escapes" are ``\\x1b``, ``\\u202e``, ``\\ud800``, ``\\U000e0041``: what a reader sees
instead of a character that would act (move the cursor, reverse the text, hide itself). The
characters are those of :data:`bpcheck.model.hazard.HAZARD_RANGES`. Nothing here knows what the
text is about.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from bpcheck.model.hazard import HAZARD, escape_char, visible

__all__ = [
    "gh_data",
    "gh_property",
    "html_text",
    "json_text",
    "line",
    "md_code",
    "md_text",
    "one_line",
    "visible",
    "visible_tree",
    "xml_safe",
    "xml_safe_tree",
]


def one_line(s: Any) -> str:
    """`s` as text for one line of output: every control, newline and carriage return included,
    and every invisible or bidirectional formatting character as a visible escape."""
    return visible(s if isinstance(s, str) else str(s))


line = one_line  # a field on one line of terminal text


# -- XML (JUnit, SVG, Graphviz HTML-like labels) --------------------------------------------------

# What XML 1.0 cannot hold at all (even escaped: C0 controls but tab, newline and carriage return,
# lone surrogates, U+FFFE and U+FFFF), and what it can but must not be shown raw (C1 controls,
# invisible and bidirectional formatting characters).
_XML = re.compile(f"(?![\t\n])(?:{HAZARD.pattern})")


def xml_safe(text: str) -> str:
    """`text` for an XML document (text or attribute, before the XML writer's own escaping of
    ``<``, ``&``, quotes): every hazardous character but tab and newline as a visible escape."""
    return _XML.sub(lambda m: escape_char(m.group()), text)


def xml_safe_tree(root) -> None:
    """:func:`xml_safe` on every text, tail and attribute of an ElementTree, in place."""
    for el in root.iter():
        for k, v in el.attrib.items():
            el.attrib[k] = xml_safe(v)
        if el.text:
            el.text = xml_safe(el.text)
        if el.tail:
            el.tail = xml_safe(el.tail)


# -- HTML -----------------------------------------------------------------------------------------


def html_text(s: Any) -> str:
    """Text or an attribute value in HTML: hazardous characters (newline and tab kept) as visible
    escapes, then ``& < > " '`` as entities."""
    return html.escape(visible(str(s), lines=True), quote=True)


# -- GitHub Actions workflow commands -------------------------------------------------------------


def gh_data(s: str) -> str:
    """The message of a workflow command (after the second ``::``): hazardous characters as
    visible escapes (newlines kept), then GitHub's data escaping (``%``, CR, LF)."""
    return visible(s, lines=True).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def gh_property(s: str) -> str:
    """A property value (``file=``, ``title=``): :func:`gh_data` and ``:`` / ``,`` escaped."""
    return gh_data(s).replace(":", "%3A").replace(",", "%2C")


# -- Markdown (summary.md, the job summary) -------------------------------------------------------

_MD_PUNCT = re.compile(r"([!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])")


def md_text(s: Any) -> str:
    """Prose in Markdown (a table cell, a paragraph): one line, hazardous characters as visible
    escapes, every ASCII punctuation character backslash-escaped (CommonMark allows it for each),
    so no markup, HTML, link, autolink or mention is made and a table cell is never split."""
    return _MD_PUNCT.sub(r"\\\1", line(str(s)))


def md_code(s: Any) -> str:
    """A code span of `s` (one line, hazardous characters as visible escapes): fenced with more
    backticks than any run inside it; ``|`` escaped so that a table cell holding it stays one."""
    t = line(str(s)).replace("|", "\\|")
    runs = [len(m) for m in re.findall(r"`+", t)]
    fence = "`" * (max(runs) + 1 if runs else 1)
    if t.startswith("`") or t.endswith("`") or (t.startswith(" ") and t.endswith(" ") and t.strip()):
        t = f" {t} "
    return f"{fence}{t}{fence}"


# -- JSON (SARIF, ITF and every JSON output) ------------------------------------------------------

# In JSON text (ensure_ascii off, so that names are readable), what the writer leaves raw and a
# file must not hold: lone surrogates (no UTF-8 file can), and the other hazardous characters
# (a viewer would act on them). Written as JSON escapes: the data stays exactly what it was.
_JSON_RAW = re.compile(f"(?![\x00-\x1f])(?:{HAZARD.pattern})")  # (the writer escapes C0 itself; the rest is layout)


def _json_escape(m: re.Match) -> str:
    n = ord(m.group())
    if n < 0x10000:
        return f"\\u{n:04x}"
    n -= 0x10000
    return f"\\u{0xD800 + (n >> 10):04x}\\u{0xDC00 + (n & 0x3FF):04x}"


_SURROGATE = re.compile("[\ud800-\udfff]")


def json_text(value: Any, hazards: bool = True, **kw: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **kw)`` with every hazardous character left in
    strings written as a JSON escape: readable names, exact data, a file any UTF-8 reader opens.
    With ``hazards=False`` only lone surrogates are (what no UTF-8 file can hold)."""
    return (_JSON_RAW if hazards else _SURROGATE).sub(_json_escape, json.dumps(value, ensure_ascii=False, **kw))


def visible_tree(value: Any, keys: frozenset[str] | None = None) -> Any:
    """A copy of a JSON value with :func:`visible` (newlines kept) applied to its strings: all of
    them, or only those under the object keys in `keys` (e.g. SARIF's ``text``)."""
    if isinstance(value, dict):
        return {k: (visible(v, lines=True) if isinstance(v, str) and (keys is None or k in keys) else visible_tree(v, keys)) for k, v in value.items()}
    if isinstance(value, list):
        return [visible_tree(x, keys) for x in value]
    if isinstance(value, str) and keys is None:
        return visible(value, lines=True)
    return value
