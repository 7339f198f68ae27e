"""One hop from a rule ID to its text and to the code and scenarios that cite it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ID = r"[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+"


def catalogue() -> dict[str, str]:
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    ids = re.findall(rf"^### ({ID})\s*$", text, flags=re.M)
    assert len(ids) == len(set(ids)), "duplicate rule IDs in docs/rules.md"
    blocks = re.split(r"^### ", text, flags=re.M)[1:]
    return {b.split("\n", 1)[0].strip(): b for b in blocks}


def test_every_rule_has_a_paraphrase_and_a_source():
    for rid, block in catalogue().items():
        assert "**Rule.**" in block, rid
        assert "**Source.**" in block, rid


def test_quotes_are_verbatim_from_the_seeds():
    seeds = {p.name[:3]: p.read_text(encoding="utf-8") for p in (ROOT.parent / "shared" / "seeds").glob("*.txt")}
    if not seeds:
        import pytest

        pytest.skip("../shared/seeds is not beside this checkout, so quotes cannot be compared")
    norm = lambda s: " ".join(s.split())  # noqa: E731
    all_text = norm("\n".join(seeds.values()))
    for rid, block in catalogue().items():
        for quote in re.findall(r'^> "(.*)"\s*$', block, flags=re.M):
            assert norm(quote) in all_text, f"{rid}: quote not found in the seeds: {quote[:60]}"


def cited_in_code() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for folder in ("model", "cli", "invariants", "explorers", "reports"):
        for f in (ROOT / folder).rglob("*.py"):
            for line_no, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
                m = re.search(r"# rules?: (.*)$", line)
                if m:
                    for rid in re.findall(ID, m.group(1)):
                        out.setdefault(rid, []).append(f"{f.relative_to(ROOT)}:{line_no}")
    return out


def cited_in_scenarios() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in sorted((ROOT / "scenarios").glob("*.toml")):
        data = tomllib.loads(f.read_text(encoding="utf-8"))
        for rid in data.get("rules", []):
            out.setdefault(rid, []).append(f.name)
    return out


def test_code_cites_only_catalogued_rules():
    known = catalogue()
    unknown = {rid: where for rid, where in cited_in_code().items() if rid not in known}
    assert not unknown


def test_the_model_cites_rules():
    assert len(cited_in_code()) >= 40


def test_scenarios_cite_only_catalogued_rules():
    known = catalogue()
    unknown = {rid: where for rid, where in cited_in_scenarios().items() if rid not in known}
    assert not unknown


def test_every_rule_is_exercised_by_a_scenario():
    cited = cited_in_scenarios()
    missing = sorted(set(catalogue()) - set(cited))
    assert not missing, f"rules no scenario cites: {missing}"
