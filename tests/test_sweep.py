"""`bpcheck sweep` (issue 30 item 4, docs/sweep.md) on the real EDOPro core and the kit's full card
database: the planted script bugs of tests/data/planted-scripts/ (each found on its planted copy,
none on the original), a CI slice (verdicts for every card, the same JSON bytes on two runs),
--resume, --baseline, the generated boards reproducing with `bpcheck check`, and bad input.

The core and the database are located as tests/test_ocgcore.py and tests/test_cards_db.py do;
without them every test here skips and says which path was missing (unless
BPCHECK_REQUIRE_OCGCORE=1, where that fails)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bpcheck.cli.main import main
from bpcheck.engines.ocgcore import default_paths
from bpcheck.harness.jobs import deadline_reason
from bpcheck.harness.sweep import OVERLAY_ENV, board_document, companion, select_cards, shapes_for
from bpcheck.model.board import load_board
from bpcheck.model.cdb import open_db
from bpcheck.model.profile import profile

ROOT = Path(__file__).resolve().parent.parent
PLANTED = ROOT / "tests" / "data" / "planted-scripts"
LIB, SCRIPTS, CARDS = default_paths()
FULL = os.path.join(os.path.dirname(CARDS), "cards-full.cdb")
MISSING = [p for p in (LIB, SCRIPTS, CARDS, FULL) if not os.path.exists(p)]
REQUIRED = os.environ.get("BPCHECK_REQUIRE_OCGCORE") == "1"
pytestmark = pytest.mark.skipif(
    bool(MISSING) and not REQUIRED,
    reason=f"the EDOPro core or the full card database is not available: {', '.join(MISSING)} not found (set OCGCORE, OCG_SCRIPTS, OCG_CARDS beside cards-full.cdb)",
)

# what each planted copy must be found by (the README says why, rule by rule)
EXPECTED = {
    "angusticlavii-equip-check-inverted": "acc.battle-damage",
    "aztecs-wrong-player": "acc.battle-damage",
    "cross-sword-beetle-condition-inverted": "acc.battle-damage",
    "gemini-lancer-status-dropped": "acc.battle-damage",
    "jurrac-brachis-self-counted": "acc.destroyed-by-battle",
    "lion-alligator-self-counted": "acc.battle-damage",
    "naturia-mosquito-self-reflect": "acc.battle-damage",
    "piranha-army-direct-check-inverted": "acc.battle-damage",
    "rocket-warrior-turn-inverted": "acc.destroyed-by-battle",
    "wattkiwi-wrong-battle-role": "acc.destroyed-by-battle",
    "psychic-fervor-end-step-only": "profile.withheld",
}
# planted copies swept with their invariant only: the original has a finding of another invariant,
# unrelated to the planted mistake (Psychic Fervor's "you lose LP" is Duel.SetLP, which reaches
# bpcheck as no LP event: acc.lp-ledger; docs/ocgcore-findings.md)
ONLY = {"psychic-fervor-end-step-only"}


def sweep(tmp_path: Path, *args: str, name: str = "out.json") -> tuple[int, dict]:
    out = tmp_path / name
    rc = main(["sweep", "-q", "--engine", "ocgcore", "--cards-db", FULL, "--json", str(out), *args])
    return rc, json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}


def planted_card(folder: Path) -> int:
    (script,) = folder.glob("c*.lua")
    return int(script.stem[1:])


def test_every_planted_folder_is_listed_and_documented():
    folders = sorted(p.name for p in PLANTED.iterdir() if p.is_dir())
    assert folders == sorted(EXPECTED)
    readme = (PLANTED / "README.md").read_text(encoding="utf-8")
    for name in folders:
        assert f"`{name}`" in readme, f"README.md does not describe {name}"
        assert len(list((PLANTED / name).glob("c*.lua"))) == 1


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_planted_script_bug_is_found_and_the_original_passes(tmp_path, name):
    folder = PLANTED / name
    code = planted_card(folder)
    before = os.environ.get(OVERLAY_ENV)
    only = ["--invariants", EXPECTED[name]] if name in ONLY else []
    rc, doc = sweep(tmp_path, str(code), *only, "--scripts-overlay", str(folder), "--boards", str(tmp_path / "b1"), name="planted.json")
    assert os.environ.get(OVERLAY_ENV) == before  # the overlay is this run's only
    assert rc == 1
    (card,) = doc["cards"]
    assert card["verdict"] == "finding"
    assert EXPECTED[name] in {f["invariant"] for f in card["findings"]}
    assert all(f["rules"] for f in card["findings"])  # each counterexample cites its rules
    # the finding reproduces with `bpcheck check` of the generated board, with the overlay on
    board = tmp_path / "b1" / card["findings"][0]["board"]
    os.environ[OVERLAY_ENV] = str(folder)
    try:
        assert main(["check", "-q", str(board), "--engine", "ocgcore", "--cards-db", FULL, "--max-states", "2000", *only]) == 1
    finally:
        if before is None:
            os.environ.pop(OVERLAY_ENV, None)
        else:
            os.environ[OVERLAY_ENV] = before
    rc, doc = sweep(tmp_path, str(code), *only, name="original.json")
    assert rc == 0, doc["cards"][0]["findings"]
    assert doc["cards"][0]["verdict"] == "clean"
    assert EXPECTED[name] not in doc["cards"][0]["not_judged_by"]  # (judged there, and held)


# a fixed slice of the database: the first 15 passcodes (under a minute on the real core)
def _slice() -> list[str]:
    return [str(c) for c in sorted(open_db(FULL).codes())[:15]]


def test_ci_slice_verdicts_and_deterministic_json(tmp_path):
    codes = _slice()
    boards = str(tmp_path / "boards")
    rc1, doc1 = sweep(tmp_path, *codes, "--boards", boards, name="a.json")
    rc2, _doc2 = sweep(tmp_path, *codes, "--boards", boards, name="b.json")
    assert rc1 == rc2 and rc1 in (0, 1)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert doc1["complete"] and doc1["judged"] == doc1["selected"] == len(codes)
    assert [c["code"] for c in doc1["cards"]] == sorted(int(c) for c in codes)
    for c in doc1["cards"]:
        assert c["verdict"] in ("finding", "no playable board", "not judged", "clean")
        for b in c["boards"]:  # every generated board is there, a board file `check` reads
            assert (tmp_path / "boards" / b["file"]).is_file()
    assert sum(doc1["verdicts"].values()) == len(codes)
    assert rc1 == (1 if doc1["verdicts"]["finding"] else 0)


def test_resume_judges_only_the_cards_not_judged(tmp_path):
    codes = _slice()[:6]
    rc, first = sweep(tmp_path, *codes[:3], name="r.json")
    assert first["judged"] == 3
    rc, second = sweep(tmp_path, *codes, "--resume", name="r.json")
    assert second["judged"] == 6 and second["complete"]
    assert second["cards"][:3] == first["cards"]
    broken = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    del broken["cards"][1]["verdict"]
    (tmp_path / "bad.json").write_text(json.dumps(broken), encoding="utf-8")
    assert main(["sweep", "-q", "--cards-db", FULL, "--json", str(tmp_path / "bad.json"), "--resume", *codes]) == 2
    # other settings: refused, the file named
    assert main(["sweep", "-q", "--cards-db", FULL, "--json", str(tmp_path / "r.json"), "--resume", "--max-states", "7", *codes]) == 2


def test_baseline_lists_known_findings(tmp_path):
    folder = PLANTED / "lion-alligator-self-counted"
    code = planted_card(folder)
    base = tmp_path / "known.toml"
    base.write_text(f'[[known]]\ncard = {code}\nfinding = "acc.battle-damage [damage-differs]"\nreason = "planted"\n', encoding="utf-8")
    rc, doc = sweep(tmp_path, str(code), "--scripts-overlay", str(folder), "--baseline", str(base))
    assert rc == 0
    (card,) = doc["cards"]
    assert card["verdict"] != "finding" and card["known"] and card["known"][0]["reason"] == "planted"
    assert doc["baseline_gone"] == []
    # the original script: the listed finding no longer occurs, said so (the baseline can be trimmed), exit 0
    rc, doc = sweep(tmp_path, str(code), "--baseline", str(base), name="orig.json")
    assert rc == 0 and not doc["cards"][0]["known"]
    assert doc["baseline_gone"] == [{"card": code, "name": doc["cards"][0]["name"], "finding": "acc.battle-damage [damage-differs]", "reason": "planted"}]
    # a sweep judged without the baseline, resumed with it: its findings are split again
    rc, doc = sweep(tmp_path, str(code), "--scripts-overlay", str(folder), name="nb.json")
    assert rc == 1 and "baseline_gone" not in doc  # (no --baseline: the document as before)
    rc, doc = sweep(tmp_path, str(code), "--scripts-overlay", str(folder), "--baseline", str(base), "--resume", name="nb.json")
    assert rc == 0 and doc["cards"][0]["known"] and not doc["cards"][0]["findings"]
    # two workers (harness/jobs.py): they see the overlay too
    rc, doc = sweep(tmp_path, str(code), "10000", "-j", "2", "--scripts-overlay", str(folder), name="j2.json")
    assert rc == 1 and [c["verdict"] for c in doc["cards"]] == ["clean", "finding"]
    base.write_text(f'[[known]]\ncard = {code}\nfinding = "acc.battle-damage"\nreason = ""\n', encoding="utf-8")
    assert main(["sweep", "-q", "--cards-db", FULL, str(code), "--baseline", str(base)]) == 2


def test_report_is_a_table_per_card(tmp_path):
    rc, doc = sweep(tmp_path, "Lion Alligator", "--report", str(tmp_path / "rep"))
    html = (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
    assert "Lion Alligator" in html and "<table" in html and doc["cards"][0]["verdict"] in html


def test_bad_input_is_exit_2_naming_the_field(tmp_path, capsys):
    assert main(["sweep", "-q", "--cards-db", FULL, "Lion Aligator"]) == 2
    err = capsys.readouterr().err
    assert "card" in err and "Lion Alligator" in err  # the near name offered
    assert main(["sweep", "-q", "--cards-db", FULL, "--type", "sideways"]) == 2
    assert "--type" in capsys.readouterr().err
    lst = tmp_path / "cards.txt"
    lst.write_text("4611269\n# a comment\n99999999999\n", encoding="utf-8")
    assert main(["sweep", "-q", "--cards-db", FULL, f"@{lst}"]) == 2
    assert re.search(r"cards\.txt: line 3", capsys.readouterr().err)
    assert main(["sweep", "-q", "--cards-db", str(tmp_path / "none.cdb")]) == 2


def test_queries_types_and_shapes():
    db = open_db(FULL)
    traps = select_cards(FULL, ["Mirror Force", "Lion Alligator", "44095762"], "trap")
    assert [c.name for c in traps] == ["Mirror Force"]
    lion = db.card("Lion Alligator")
    shapes = shapes_for(lion, profile(lion))
    assert shapes[:2] == ["attacker", "attacked"]
    doc = board_document(lion, "attacker")
    assert doc["p1"]["monsters"][0]["card"] == lion.code and doc["turn_player"] == 1
    fisherman = db.card("The Legendary Fisherman")  # "while "Umi" is on the field": Umi beside it
    shapes = shapes_for(fisherman, profile(fisherman), companion(fisherman, db))
    assert "with-companion" in shapes
    doc = board_document(fisherman, "with-companion", companion(fisherman, db))
    assert doc["p1"]["field_spell"] == {"card": db.card("Umi").code}
    assert companion(lion, db) is None
    mf = db.card("Mirror Force")
    assert shapes_for(mf, profile(mf)) == ["set-opponent", "set-own"]


# -- signals (issue 33 item 4) ---------------------------------------------------------------------------

NORMALS = ["Battle Ox", "Mokey Mokey", "Dark Magician", "Celtic Guardian", "Summoned Skull", "Gemini Elf"]  # the reference plays them
_SLOW_READ = """
import pathlib, sys, time
import bpcheck.harness.sweep as sw
mark = pathlib.Path(sys.argv[1])
real = sw.select_cards
def slow(*a, **k):
    mark.touch()  # the test sends its signal now: the cards are being read
    time.sleep(3)
    return real(*a, **k)
sw.select_cards = slow
from bpcheck.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


def _sweep_process(tmp_path: Path, *args: str, code: str | None = None, slow: str = "0", extra: dict | None = None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_STEP_SUMMARY",)}
    env.update(PYTHONPATH=os.pathsep.join([str(ROOT / "tests"), env.get("PYTHONPATH", "")]), CI="1", PYTHONUNBUFFERED="1", LIFECYCLE_SLOW=slow)
    env.update(extra or {})
    head = [sys.executable, "-c", code, str(tmp_path / "reading")] if code else [sys.executable, "-m", "bpcheck"]
    return subprocess.Popen([*head, "sweep", *NORMALS, "--engine", "lifecycle_engines:slow", "--cards-db", FULL, "--batch", "1", *args],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)


def _wait_then_signal(p: subprocess.Popen, ready, sig: int) -> tuple[str, str]:
    try:
        t0 = time.monotonic()
        while not ready():
            assert p.poll() is None, p.communicate()
            assert time.monotonic() - t0 < 300
            time.sleep(0.05)
        p.send_signal(sig)
        return p.communicate(timeout=300)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_writes_the_partial_json_and_report_and_resumes(tmp_path, sig, status):
    """A signal while a batch is explored (a slow engine: 0.05 s an action): the cards judged before
    it are in --json and --report, the status is the signal's, and --resume judges the rest: the
    same document as a sweep never stopped."""
    whole = tmp_path / "whole.json"
    p = _sweep_process(tmp_path, "--json", str(whole))
    assert p.wait(timeout=600) == 0, p.communicate()
    out, rep = tmp_path / "s.json", tmp_path / "rep"
    p = _sweep_process(tmp_path, "--json", str(out), "--report", str(rep), slow="0.05")
    rest, err = _wait_then_signal(p, out.exists, sig)  # the first batch is written
    name = signal.Signals(sig).name
    assert p.returncode == status, (rest, err[-2000:])
    assert "Traceback" not in rest + err and f"interrupted by {name}: go on with --resume --json FILE" in rest
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert not doc["complete"] and 1 <= doc["judged"] < len(NORMALS), doc["judged"]
    assert (rep / "index.html").is_file()
    p = _sweep_process(tmp_path, "--json", str(out), "--resume")
    assert p.wait(timeout=600) == 0, p.communicate()
    assert out.read_bytes() == whole.read_bytes()


def test_a_signal_while_the_cards_are_read_still_writes_json_and_report(tmp_path):
    """SIGTERM before the first batch (the card database being read): before issue 33's fix the
    run ended at once with nothing written; now --json (no card judged, not complete) and --report
    are written, exit 143, and --resume does the whole sweep."""
    out, rep = tmp_path / "s.json", tmp_path / "rep"
    p = _sweep_process(tmp_path, "--json", str(out), "--report", str(rep), code=_SLOW_READ)
    rest, err = _wait_then_signal(p, (tmp_path / "reading").exists, signal.SIGTERM)
    assert p.returncode == 143, (rest, err[-2000:])
    assert "Traceback" not in rest + err and "interrupted by SIGTERM" in rest
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert not doc["complete"] and doc["judged"] == 0 and doc["selected"] == len(NORMALS)
    assert (rep / "index.html").is_file()
    p = _sweep_process(tmp_path, "--json", str(out), "--resume")
    assert p.wait(timeout=600) == 0, p.communicate()
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["complete"] and doc["judged"] == len(NORMALS)
# -- a board stuck inside one engine call (SPYGAL Misty on the core: one state took 12 minutes) -----------

STUCK = "46986414-attacker"  # Dark Magician attacking: the engine blocks inside its first step
BLOCK = "600"  # seconds the engine sleeps in that step: far beyond every bound below


def _finish(p: subprocess.Popen, timeout: float) -> tuple[str, str]:
    try:
        return p.communicate(timeout=timeout)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def test_a_board_stuck_in_one_step_is_killed_at_the_deadline(tmp_path):
    """--timeout 5 is checked between states; a board whose engine blocks inside one step (600 s)
    has its worker killed 5 s + DEADLINE_GRACE after it was handed the board, -j 1 (the sweep runs
    every board in a worker process) and -j 2: the run goes on, the board is inconclusive with the
    deadline's fixed reason and 0 states, and everything else is byte for byte the run without the
    block."""
    whole = tmp_path / "whole.json"
    p = _sweep_process(tmp_path, "--json", str(whole), "--timeout", "5")
    out, err = _finish(p, 600)
    assert p.returncode == 0, (out, err[-2000:])
    for jobs in ("1", "2"):
        stuck = tmp_path / f"stuck-{jobs}.json"
        t0 = time.monotonic()
        p = _sweep_process(tmp_path, "--json", str(stuck), "--timeout", "5", "-j", jobs, slow=BLOCK, extra={"LIFECYCLE_SLOW_ON": STUCK})
        out, err = _finish(p, 500)
        took = time.monotonic() - t0
        assert p.returncode == 0, (out, err[-2000:])
        assert took < 300, took  # (one blocked step alone is 600 s)
        assert "Traceback" not in out + err
        # the card is "not judged", not clean: nothing of its killed board was judged
        assert "NOT JUDGED          46986414 Dark Magician: 2 of 2 boards played; 1 killed at the --timeout deadline" in out, out
        doc = json.loads(stuck.read_text(encoding="utf-8"))
        row = next(b for c in doc["cards"] for b in c["boards"] if b["file"] == f"{STUCK}.toml")
        assert row == {"shape": "attacker", "file": f"{STUCK}.toml", "verdict": "inconclusive", "states": 0, "bound_hit": deadline_reason(5.0)}
        expected = json.loads(whole.read_text(encoding="utf-8"))
        for c in expected["cards"]:
            if any(b["file"] == row["file"] for b in c["boards"]):
                assert c["verdict"] == "clean", c
                c["verdict"] = "not judged"
                expected["verdicts"]["clean"] -= 1
                expected["verdicts"]["not judged"] += 1
            c["boards"] = [row if b["file"] == row["file"] else b for b in c["boards"]]
        assert stuck.read_text(encoding="utf-8") == json.dumps(expected, indent=1) + "\n"


def test_a_first_sigint_stops_a_sweep_stuck_in_one_step(tmp_path):
    """Ctrl-C (SIGINT to the process group) while a worker is inside a step that blocks for 600 s:
    the sweep stops within seconds (workers still busy STOP_KILL_AFTER after the signal are
    killed), exit 130, no traceback, --json holds the cards judged before (not complete), and
    --resume gives the document of a sweep never stopped."""
    whole = tmp_path / "whole.json"
    p = _sweep_process(tmp_path, "--json", str(whole))
    out, err = _finish(p, 600)
    assert p.returncode == 0, (out, err[-2000:])
    part, started = tmp_path / "part.json", tmp_path / "started"
    p = _sweep_process(tmp_path, "--json", str(part), slow=BLOCK, extra={"LIFECYCLE_SLOW_ON": STUCK, "LIFECYCLE_STARTED": str(started)})
    try:
        t0 = time.monotonic()
        while not started.exists():  # the worker is inside the blocked step
            assert p.poll() is None, p.communicate()
            assert time.monotonic() - t0 < 300
            time.sleep(0.05)
        os.killpg(p.pid, signal.SIGINT)
        t1 = time.monotonic()
        out, err = p.communicate(timeout=300)
        took = time.monotonic() - t1
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == 130, (out, err[-2000:])
    assert took < 60, took  # (before: until the step returned, 600 s)
    assert "Traceback" not in out + err and "interrupted by SIGINT: go on with --resume --json FILE" in out
    doc = json.loads(part.read_text(encoding="utf-8"))
    assert not doc["complete"] and [c["name"] for c in doc["cards"]] == ["Battle Ox", "Mokey Mokey"]  # the cards before Dark Magician
    p = _sweep_process(tmp_path, "--json", str(part), "--resume")
    out, err = _finish(p, 600)
    assert p.returncode == 0, (out, err[-2000:])
    assert part.read_bytes() == whole.read_bytes()


def _first(db, bits: int, without: int = 0):
    return next(c for c in sorted(db, key=lambda c: c.code) if c.type & bits == bits and not c.type & without and not c.alias)


def test_xyz_link_and_pendulum_shapes(tmp_path):
    from bpcheck.harness.sweep import XYZ_MATERIALS, card_boards, xyz_materials
    from bpcheck.model import cdb as C
    from bpcheck.model.board import board_from_dict

    db = open_db(FULL)
    # an Xyz monster: its 2 materials are the first Normal Monsters (by passcode) whose Level is its Rank
    xyz = _first(db, C.TYPE_MONSTER | C.TYPE_XYZ, C.TYPE_PENDULUM)
    normals = sorted(c.code for c in db if c.type == C.TYPE_MONSTER | C.TYPE_NORMAL and not c.alias and c.level == xyz.level)
    mats = xyz_materials(xyz, db)
    assert len(mats) == XYZ_MATERIALS == 2 and mats == normals[:2]
    for shape, side in (("attacker", "p1"), ("attacked", "p2")):
        doc = board_document(xyz, shape, None, mats)
        assert doc[side]["monsters"][0] == {"zone": 1, "card": xyz.code, "position": "attack", "materials": mats}
        b = board_from_dict(doc, "x.toml", cards_db=FULL)
        assert [[m.card for m in ms] for _u, ms in b.extras.materials] == [[db.get(c).name for c in mats]]
    lion = db.card("Lion Alligator")
    assert xyz_materials(lion, db) == [] and "materials" not in board_document(lion, "attacker", None, [])["p1"]["monsters"][0]
    # a Link monster: in its controller's Extra Monster Zone, never in a Main Monster Zone
    link = _first(db, C.TYPE_MONSTER | C.TYPE_LINK)
    doc = board_document(link, "attacker")
    assert doc["p1"]["extra_monsters"] == [{"zone": 1, "card": link.code, "position": "attack"}] and "monsters" not in doc["p1"]
    doc = board_document(link, "attacked")
    assert doc["p2"]["extra_monsters"][0]["card"] == link.code and "monsters" not in doc["p2"] and doc["p1"]["monsters"][0]["card"] == "Battle Ox"
    # a Pendulum monster: also in either player's Pendulum Zone
    pend = _first(db, C.TYPE_MONSTER | C.TYPE_PENDULUM, C.TYPE_XYZ | C.TYPE_LINK | C.TYPE_SYNCHRO | C.TYPE_FUSION)
    shapes = shapes_for(pend, profile(pend))
    assert shapes[:2] == ["attacker", "attacked"] and shapes[-2:] == ["pendulum-own", "pendulum-opponent"]
    assert board_document(pend, "pendulum-opponent")["p2"]["pendulum"] == [{"zone": 1, "card": pend.code}]
    assert "pendulum-own" not in shapes_for(lion, profile(lion))
    # every such board is written and reads back as `check` reads it
    for card in (xyz, link, pend):
        written, refused = card_boards(card, profile(card), tmp_path, FULL)
        assert not refused and {s for s, _p in written} == set(shapes_for(card, profile(card), companion(card, db)))
        for _s, path in written:
            load_board(path, cards_db=FULL)


# -- the classified findings of the whole database (baselines/ocgcore-sweep.toml, F38) -----------------

SWEEP_BASELINE = ROOT / "baselines" / "ocgcore-sweep.toml"
CLASSES = ("A", "B", "C", "R", "C/R")


def test_the_classified_baseline_names_real_cards_invariants_signatures_and_a_class():
    from bpcheck.harness.sweep import load_sweep_baseline
    from bpcheck.invariants import REGISTRY
    from bpcheck.invariants.signatures import signatures_of

    known = load_sweep_baseline(str(SWEEP_BASELINE))
    assert len(known) >= 20, len(known)
    codes = set(open_db(FULL).codes())
    seen = set()
    for k in known:
        assert k.card in codes, k
        m = re.fullmatch(r"(\S+) \[(\S+)\]", k.finding)
        assert m is not None, k  # (each entry names its signature: a new failure of the invariant is not hidden)
        inv, sig = m.groups()
        assert inv in REGISTRY and sig in signatures_of(inv), k
        cls = k.reason.split(":", 1)[0]
        assert cls in CLASSES and "F3" in k.reason, k  # its class, and the finding of docs/ocgcore-findings.md
        assert (k.card, k.finding) not in seen, k
        seen.add((k.card, k.finding))


def test_cards_swept_against_the_classified_baseline_are_known_not_findings(tmp_path):
    """Three cards whose findings are classified C (a script against the seeds: Giant Soldier of
    Steel's DEF change after damage calculation, Begone, Knave! in the Damage Step, Gyroid's
    protection applied without its controller's choice): swept with the baseline, each finding is
    known (exit 0), and no entry of theirs is reported gone."""
    names = {"Giant Soldier of Steel": 57043117, "Begone, Knave!": 20374520, "Gyroid": 18325492}
    rc, doc = sweep(tmp_path, *map(str, names.values()), "--baseline", str(SWEEP_BASELINE), "-j", "2")
    assert rc == 0, [(c["name"], c["findings"]) for c in doc["cards"]]
    for c in doc["cards"]:
        assert c["known"] and not c["findings"], (c["name"], c["findings"], c["known"])
        assert all(k["reason"].startswith("C:") for k in c["known"]), c["known"]
    assert doc["baseline_gone"] == []
