"""`bpcheck fuzz`: random boards alone kill mutants; the shrunk board is a file `bpcheck check`
reproduces with the same invariant; deterministic for a seed; the example database replays."""

from __future__ import annotations

import json
import re

import pytest

# (mutant, the invariant its shrunk board breaks, a seed): mutants that die within a few boards, so
# that the whole file stays fast. `bpcheck fuzz` kills all 18 with the default settings
# (benchmarks/fuzz_bench.py, docs/performance.md). The seed is the first of 0, 1, ... whose 20
# boards kill it with the pool as it is (an equal-ATK battle is rarer as the pool grows: with the
# 82-card pool, 3 seeds of the first 14 draw one).
KILLS = [
    ("equal-atk-destroys-one", "acc.destroyed-by-battle", "9"),
    ("declaration-window-stays-open", "window.attack-declaration", "0"),
    ("direct-attack-past-monsters", "attack.direct-legal", "0"),
]
FAST = ["--seed", "0", "--examples", "20", "--max-states", "1500"]


@pytest.mark.parametrize("mutant,invariant,seed", KILLS, ids=[m for m, _i, _s in KILLS])
def test_fuzz_kills_a_mutant_from_random_boards_and_check_reproduces_it(run_cli, tmp_path, mutant, invariant, seed):
    cex = tmp_path / "cex"
    args = ["--seed", seed, *FAST[2:]]
    code, out, err = run_cli("fuzz", "--engine", f"mutant:{mutant}", *args, "--cex-dir", str(cex), "--json", str(tmp_path / "f.json"))
    assert code == 1, out + err
    doc = json.loads((tmp_path / "f.json").read_text())
    fail = doc["failure"]
    assert doc["verdict"] == "fail" and fail["invariant"] == invariant
    assert fail["cards"] <= fail["cards_before_shrinking"] and fail["cards"] <= 4, fail  # shrunk
    board = cex / f"fuzz-{invariant}.toml"
    assert fail["board_file"] == str(board) and board.exists()
    assert f"{invariant}: " in out and "to replay this failure:" in out
    assert doc["check"]["boards"][0]["counterexamples"][0]["invariant"] == invariant
    assert doc["check"]["boards"][0]["counterexamples"][0]["length"] == fail["length"]
    # The board file alone reproduces it: check fails with the same invariant first ...
    code, out, _ = run_cli("check", "--engine", f"mutant:{mutant}", "--max-states", "1500", str(board), "--json", str(tmp_path / "c.json"))
    assert code == 1
    cexs = json.loads((tmp_path / "c.json").read_text())["boards"][0]["counterexamples"]
    assert invariant in [c["invariant"] for c in cexs]
    assert min(c["length"] for c in cexs if c["invariant"] == invariant) == fail["length"]
    # ... the reference passes it, and the saved counterexample replays.
    assert run_cli("check", str(board))[0] == 0
    assert run_cli("replay", str(cex / f"fuzz-{invariant}.{invariant}.json"), "--engine", f"mutant:{mutant}")[0] == 1


def test_fuzz_on_the_reference_finds_nothing(run_cli):
    code, out, err = run_cli("fuzz", "--seed", "1", "--examples", "12", "--max-states", "800")
    assert code == 0, out + err  # some boards were explored only in part: what a bounded fuzzer does
    # (the boards a seed draws depend on the pool, and so how many hit the bound: the summary
    # line and the verdict line say the same number)
    hit = re.search(r"fuzz: 12 boards drawn, [\d,]+ states explored, (\d+) boards hit --max-states 800\n", out)
    assert hit and "FAIL" not in out, out
    assert f"PASS  no invariant broken on the 12 boards explored; {hit.group(1)} of them only in part, up to --max-states 800" in out, out


def test_fuzz_partial_boards_pass_and_exit_3_only_with_strict(run_cli, tmp_path):
    code, out, _ = run_cli("fuzz", "--seed", "0", "--examples", "5", "--max-states", "2", "--json", str(tmp_path / "f.json"))
    assert code == 0 and re.match(r"fuzz: 5 boards drawn, \d+ states explored, 5 boards hit --max-states 2\n", out), out
    assert "PASS  no invariant broken on the 5 boards explored; 5 of them only in part, up to --max-states 2 (raise it" in out
    doc = json.loads((tmp_path / "f.json").read_text())
    assert doc["verdict"] == "pass" and doc["stats"]["bound_hits"] == 5 and doc["stats"]["explored"] == 5 and doc["strict"] is False
    code, out, _ = run_cli("fuzz", "--seed", "0", "--examples", "5", "--max-states", "2", "--strict", "--json", str(tmp_path / "f.json"))
    assert code == 3 and "INCONCLUSIVE  no invariant broken on the 5 boards explored, but with --strict a partial search is no pass; 5 of them only in part" in out, out
    assert json.loads((tmp_path / "f.json").read_text())["verdict"] == "inconclusive"


def test_fuzz_is_deterministic_for_a_seed(run_cli, tmp_path):
    runs = []
    for k in range(2):
        code, out, _ = run_cli("fuzz", "--engine", "mutant:direct-attack-past-monsters", *FAST, "--json", str(tmp_path / f"{k}.json"))
        assert code == 1
        runs.append(((tmp_path / f"{k}.json").read_bytes(), out))
    assert runs[0] == runs[1]


def test_fuzz_database_replays_known_failures_first(run_cli, tmp_path):
    db = str(tmp_path / "db")
    args = ["fuzz", "--engine", "mutant:direct-attack-past-monsters", "--seed", "0", "--max-states", "1500"]
    assert run_cli(*args, "--examples", "1")[0] != 1  # the first board drawn does not show the bug
    code, first, _ = run_cli(*args, "--examples", "20", "--database", db)
    assert code == 1
    code, again, _ = run_cli(*args, "--examples", "1", "--database", db)  # one board: only the database can find it
    assert code == 1 and "breaks attack.direct-legal on board 1 of the search" in again
    assert first.split("minimal board:")[1] == again.split("minimal board:")[1].replace("--examples 1 ", "--examples 20 ")


def test_fuzz_bad_input(run_cli):
    code, _, err = run_cli("fuzz", "--cards", "Battle Ox,Mirror Forse")
    assert code == 2 and "--cards: [1]: unknown card 'Mirror Forse' (did you mean 'Mirror Force'?)" in err
    code, _, err = run_cli("fuzz", "--invariants", "no.such")
    assert code == 2 and "--invariants" in err
    code, _, err = run_cli("fuzz", "--engine", "mutant:nope")
    assert code == 2 and "unknown mutant" in err
    assert run_cli("fuzz", "--examples", "0")[0] == 2


def test_fuzz_cards_restrict_the_boards(run_cli, tmp_path):
    code, out, _ = run_cli(
        "fuzz", "--engine", "mutant:direct-attack-past-monsters", "--cards", "Battle Ox,Mokey Mokey", *FAST,
        "--json", str(tmp_path / "f.json"), "--report", str(tmp_path / "report"),
    )
    assert code == 1
    assert (tmp_path / "report" / "index.html").exists() and (tmp_path / "report" / "junit.xml").exists()
    board = json.loads((tmp_path / "f.json").read_text())["failure"]["board"]
    names = {m["card"] for s in ("p1", "p2") for m in board[s].get("monsters", [])}
    assert names and names <= {"Battle Ox", "Mokey Mokey"}


def test_fuzz_differential_compares_with_the_reference(run_cli, tmp_path):
    code, out, _ = run_cli(
        "fuzz", "--engine", "mutant:direct-attack-past-monsters", "--differential", "--invariants", "chain.lifo", *FAST,
        "--json", str(tmp_path / "f.json"),
    )
    assert code == 1
    assert json.loads((tmp_path / "f.json").read_text())["failure"]["invariant"] == "DIFF"
    assert "which the reference does not" in out
