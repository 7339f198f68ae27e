"""One count everywhere, and counts in words (issue 34 item 3): the HTML report counts the
invariants as the command line does (the structural checks named apart), "1 board" never
"1 boards", no "effect None" in a not-judged note, no doc line still saying "(next issue)"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bpcheck.invariants.base import Unknown
from bpcheck.invariants.cards import CardFacts
from bpcheck.invariants.chains import _triggered
from bpcheck.invariants.naming import TraceNames, event_text
from bpcheck.reports.text import plural

ROOT = Path(__file__).resolve().parent.parent
BOARD = "boards/000-replay-1.toml"


@pytest.mark.parametrize("extra", [(), ("--differential",), ("--invariants", "attack counts")])
def test_the_html_report_counts_the_invariants_the_cli_counts(run_cli, tmp_path, extra):
    rep = tmp_path / "rep"
    code, out, err = run_cli("check", str(ROOT / BOARD), "--report", str(rep), "-q", *extra)
    assert code == 0, out + err
    cli = re.search(r"\(1 board, (\d+) invariants?\)", out)
    assert cli, out
    banner = re.search(r'id="overall">.*?</div>', (rep / "index.html").read_text(), flags=re.S).group(0)
    assert f" · {cli.group(1)} invariants and 3 structural checks (DEADLOCK, CYCLE, ENGINE-FAULT) · " in banner, banner
    assert "properties" not in banner


def test_one_is_singular_in_what_the_commands_print(run_cli, tmp_path):
    code, out, _err = run_cli("check", str(ROOT / BOARD), "-q")
    assert code == 0 and "(1 board, " in out
    code, out, _err = run_cli("scenario", str(ROOT / "scenarios" / "000-replay-1.toml"), "-q")
    assert code == 0 and "(1 file, engine reference, ruleset tcg)" in out
    code, out, _err = run_cli("check", str(ROOT / BOARD), "--invariants", "attack.count", "-q")
    assert "(1 board, 1 invariant)" in out
    for text in (out,):
        assert not re.search(r"\b1 (boards|files|invariants|states|transitions|steps)\b", text), text
    assert plural(1, "board") == "1 board" and plural(0, "board") == "0 boards" and plural(12345, "state", fmt=",") == "12,345 states"


def test_a_chain_link_naming_no_effect_is_not_effect_none():
    facts = CardFacts([])
    with pytest.raises(Unknown) as e:
        _triggered(facts, "Mirror Force", None)
    assert "None" not in str(e.value) and "its effect (its chain link names none)" in str(e.value)
    with pytest.raises(Unknown) as e:
        _triggered(facts, "Mirror Force", 2)
    assert "its effect 2" in str(e.value)


def test_an_event_field_left_empty_is_not_none_in_text():
    names = TraceNames([{}])
    text = event_text({"kind": "chain_link_added", "card_uid": None, "effect": None, "speed": 2}, names, 0)
    assert text == "chain link added: card none, effect not given, speed 2", text


STALE = re.compile(r"\b(next|a later|a future|an upcoming|the coming) (issue|session|release|version)\b|\b(coming soon|TBD|TODO)\b", re.I)


def test_no_doc_still_says_next_issue():
    """A doc line promising work for later ("(next issue)", "in a later issue", "TODO") goes
    stale; what is not done is said as such, with the issue that asks for it ("not yet (issue 30
    item 4 asks for them)")."""
    stale = [f"{p.relative_to(ROOT)}:{i}: {line.strip()[:80]}" for p in sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if STALE.search(line)]
    assert not stale, stale
    assert STALE.search("Not yet in the format (next issue)") and STALE.search("left for a later issue") and not STALE.search("not yet (issue 30 item 4 asks)")
