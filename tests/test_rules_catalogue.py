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


CODE_FOLDERS = ("model", "cli", "harness", "engines", "api", "invariants", "explorers", "reports")
# A citation: "# rule: ID" / "# rules: ID, ID" in a comment, or "(rule: ID)" / "(rules: ID, ID)" in a
# comment or docstring; in parentheses it ends at the ")". A wildcard such as DS-LEGAL-* names no rule.
CITATION = re.compile(r"#\s*rules?: (.*)$|\(rules?: ([^)]*)")
CITED_ID = re.compile(rf"{ID}(?![\w*-])")


def cited_in_code(folders: tuple[str, ...] = CODE_FOLDERS) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for folder in folders:
        for f in sorted((ROOT / folder).rglob("*.py")):
            for line_no, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
                for m in CITATION.finditer(line):
                    for rid in CITED_ID.findall(m.group(1) or m.group(2)):
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


def test_every_rule_is_cited_in_the_model():
    # One hop from a rule ID to the code that implements it: `grep -rn -A2 "rules\?: .*ID" model/`
    # (docs/model.md) finds it for every rule in the catalogue.
    cited = cited_in_code(("model",))
    missing = sorted(set(catalogue()) - set(cited))
    assert not missing, f"rules the model (model/) does not cite as 'rule: ID' or 'rules: ID, ...': {missing}"


def test_the_citation_scan_reads_comments_and_docstrings():
    line = '    x = 1  # rules: RPL-TRIGGER, STOP-ATTACK (not a replay; DS-LEGAL-* names no rule)'
    found = [rid for m in CITATION.finditer(line) for rid in CITED_ID.findall(m.group(1) or m.group(2))]
    assert found == ["RPL-TRIGGER", "STOP-ATTACK"]
    line = '    """Why a replay happens (rule: RPL-TRIGGER). Not RPL-COUNTS."""'
    found = [rid for m in CITATION.finditer(line) for rid in CITED_ID.findall(m.group(1) or m.group(2))]
    assert found == ["RPL-TRIGGER"]


def test_scenarios_cite_only_catalogued_rules():
    known = catalogue()
    unknown = {rid: where for rid, where in cited_in_scenarios().items() if rid not in known}
    assert not unknown


def test_every_rule_is_judged_by_an_invariant():
    # A rule only the reference model implements is a rule no engine is checked against.
    from bpcheck.invariants import REGISTRY

    judged = {rid for inv in REGISTRY.values() for rid in inv.rules}
    unknown = sorted(judged - set(catalogue()))
    assert not unknown, f"invariants cite rules the catalogue does not have: {unknown}"
    missing = sorted(set(catalogue()) - judged)
    assert not missing, f"rules no invariant judges: {missing}"


def test_every_rule_is_exercised_by_a_scenario():
    cited = cited_in_scenarios()
    missing = sorted(set(catalogue()) - set(cited))
    assert not missing, f"rules no scenario cites: {missing}"


# -- seed coverage: every line of the passages the model is built from is accounted for ---------

SEED_SECTIONS = {  # seed -> [(first line of the section, the line after its end or None)]
    "002": [("TCG Battle Phase", None)],  # the OCG section too (issue 31: rulesets.md)
    "000": [("WHAT IS A REPLAY?", 'CAN I USE "MONSTER REBORN"'), ("THE BATTLE PHASE", None)],
}
COVERAGE_ROW = re.compile(r"^\| (\d{3}) \| `([^`]+)` \| (.+?) \|\s*$", re.M)
# A line shorter than this counts as quoted only if a quote is inside it (a heading such as
# "Flip Effects" is not covered by a quote that happens to contain those words).
MIN_QUOTED = 40


def _norm(s: str) -> str:
    return " ".join(s.split())


def seed_lines() -> dict[str, list[str]]:
    seeds_dir = ROOT.parent / "shared" / "seeds"
    files = {p.name[:3]: p for p in seeds_dir.glob("*.txt")}
    if not files:
        import pytest

        pytest.skip("../shared/seeds is not beside this checkout, so the seed coverage cannot be checked")
    out: dict[str, list[str]] = {}
    for seed, sections in SEED_SECTIONS.items():
        text = files[seed].read_text(encoding="utf-8")
        for start, end in sections:
            i = text.index(start)
            j = text.index(end, i) if end else len(text)
            for line in text[i:j].splitlines():
                line = _norm(line.strip().lstrip("•").strip())
                if line:
                    out.setdefault(seed, []).append(line)
    return out


def coverage_rows() -> list[tuple[str, str, str]]:
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    part = text.split("\n## Seed coverage\n", 1)
    assert len(part) == 2, "docs/rules.md has no '## Seed coverage' section"
    return [(m.group(1), _norm(m.group(2)), m.group(3).strip()) for m in COVERAGE_ROW.finditer(part[1])]


def rule_quotes() -> list[str]:
    return [_norm(q) for block in catalogue().values() for q in re.findall(r'^> "(.*)"\s*$', block, flags=re.M)]


def test_every_seed_line_is_quoted_by_a_rule_or_listed_in_the_coverage_table():
    lines = seed_lines()
    quotes = rule_quotes()
    rows = coverage_rows()
    missing = []
    for seed, seed_ls in lines.items():
        for line in seed_ls:
            if any(q in line or (len(line) >= MIN_QUOTED and line in q) for q in quotes):
                continue
            if any(s == seed and line.startswith(p) for s, p, _c in rows):
                continue
            missing.append(f"{seed}: {line[:100]}")
    assert not missing, "seed lines neither quoted by a rule nor listed in docs/rules.md 'Seed coverage':\n" + "\n".join(missing)


def test_every_coverage_row_matches_a_seed_line_and_names_what_covers_it():
    lines = seed_lines()
    ids = set(catalogue())
    for seed, passage, covered in coverage_rows():
        assert any(line.startswith(passage) for line in lines.get(seed, [])), f"{seed}: no seed line starts with {passage!r}"
        if covered in ("heading",) or covered.startswith("no rule: "):
            continue
        if covered.startswith("not modelled: "):
            assert len(covered) > len("not modelled: ") + 10, f"{passage!r}: a 'not modelled' row needs its reason"
            continue
        for rid in covered.split(", "):
            assert rid in ids, f"{passage!r}: covered by {rid!r}, which is not a rule ID, 'heading', 'no rule: ...' or 'not modelled: ...'"


def test_the_coverage_check_can_fail():
    # A made-up line that no rule quotes and no row lists is reported.
    quotes, rows = rule_quotes(), coverage_rows()
    line = "A monster may attack twice if its controller says so politely."
    assert not any(q in line or line in q for q in quotes)
    assert not any(line.startswith(p) for _s, p, _c in rows)
