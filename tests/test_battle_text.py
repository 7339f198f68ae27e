"""Battle damage and destruction by battle judged with what a card's text does to them (issue 30
item 3): the profile's battle modifications (model/profile.py ``battle_mods``, docs/profiles.md)
read by acc.battle-damage and acc.destroyed-by-battle (invariants/accounting.py ``text_mods``).

The purpose-built engine is the reference model playing cards of the kit's ``cards-full.cdb`` as
cards without effects (tests/profile_engines.py ``Offers``): an engine that forgets a card's
piercing, its "cannot be destroyed by battle" and its "you take no battle damage". Where the text's
condition does not hold, the same engine is right, and the checks hold; where the profile is not
sure of a wording, the battle is not judged and the reason names the card and its sentence. The
real core's side is tests/test_sweep.py (the planted scripts: each found, each original clean) and
the real-core case below.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import tomllib

from bpcheck.engines.ocgcore import default_paths
from bpcheck.explorers.checking import EngineSystem
from bpcheck.explorers.core import explore
from bpcheck.invariants import select
from bpcheck.invariants.signatures import signature_of
from bpcheck.model.board import load_board
from bpcheck.model.cdb import CardDB
from bpcheck.model.profile import RULES, profile

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import profile_engines as PE  # noqa: E402

LIB, SCRIPTS, CARDS = default_paths(str(ROOT))
FULL = os.environ.get("OCG_CARDS_FULL") or os.path.join(os.path.dirname(CARDS), "cards-full.cdb")
REQUIRED = os.environ.get("BPCHECK_REQUIRE_OCGCORE") == "1"
INVS = "acc.battle-damage,acc.destroyed-by-battle"
LABELS = ROOT / "tests" / "data" / "profile_labels.toml"


def _need(*paths: str) -> None:
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        if REQUIRED:
            pytest.fail(f"required here (BPCHECK_REQUIRE_OCGCORE=1) but not found: {', '.join(missing)}")
        pytest.skip(f"not available: {', '.join(missing)} not found (set OCG_CARDS beside cards-full.cdb, or OCG_CARDS_FULL)")


@pytest.fixture(scope="module")
def full():
    _need(FULL)
    return CardDB(FULL)


def _board(tmp_path, p1: list[str], p2: list[str], name="battle text"):
    _need(FULL)
    mons = lambda cards: ", ".join(f'{{ zone = {i + 1}, card = "{c.split("@")[0]}", position = "{c.split("@")[1] if "@" in c else "attack"}" }}' for i, c in enumerate(cards))  # noqa: E731
    f = tmp_path / "b.toml"
    f.write_text(f'name = "{name}"\nturn = 2\nturn_player = 1\n[p1]\nlp = 8000\nmonsters = [{mons(p1)}]\n'
                 f'[p2]\nlp = 8000\nmonsters = [{mons(p2)}]\n', encoding="utf-8")
    return load_board(f, "b.toml", cards_db=FULL)


def _run(board):
    es = EngineSystem(PE.Offers("no such card", ()), board, select(INVS))
    return es, explore(es)


def _msgs(r, prop):
    return [v.message for v in r.violations if v.prop == prop]


# -- the reader -----------------------------------------------------------------------------------


def _mods(db, name):
    return [(b.kind, b.sure, b.scope, b.role, b.to, b.conditions) for b in profile(db.card(name)).battle_mods]


def test_the_reader_computes_the_wordings_it_knows(full):
    assert _mods(full, "Cyber End Dragon") == [("piercing", True, ("self",), "attacker", "opponent", ())]
    assert _mods(full, "Lion Alligator") == [
        ("piercing", True, ("race", "Reptile", False), "attacker", "opponent", (("control_race", "Reptile", True),))]
    assert _mods(full, "Yubel - The Ultimate Nightmare") == [
        ("indestructible", True, ("self",), None, None, ()), ("no_damage", True, ("self",), "battler", "you", ())]
    assert _mods(full, "Rocket Warrior")[0][5] == (("your_turn",),)
    assert _mods(full, "Wattkiwi") == [("indestructible", True, ("archetype", "Watt", False, "you"), "attacker", None, ())]
    assert _mods(full, "Gemini Lancer") == [("piercing", True, ("self",), "attacker", "opponent", (("gemini",),))]
    assert _mods(full, "Mecha Phantom Beast Sabre Hawk") == [("indestructible", True, ("self",), None, None, (("control_token",),))]
    assert _mods(full, "Gogogo Golem - Golden Form") == [("halve", True, ("self",), "battler", "opponent", ())]
    # each with its sentence: the text span and the pattern
    b = profile(full.card("Stone Statue of the Aztecs")).battle_mods[0]
    assert (b.kind, b.to, b.role, b.rule) == ("double", "opponent", "target", "BD-DOUBLE")
    assert full.card("Stone Statue of the Aztecs").text[b.evidence.span[0]:b.evidence.span[1]] == b.evidence.quote
    assert b.evidence.pattern == "bd-double-attacked" and RULES[b.rule].cite


def test_a_wording_it_does_not_compute_is_unsure_never_a_guess(full):
    hexa = profile(full.card("Speedroid Hexasaucer")).battle_mods
    assert [(b.kind, b.sure) for b in hexa] == [("other", False), ("halve", True)]
    assert hexa[0].why and hexa[0].self_only
    # a trigger's event is not a modification, unless the sentence changes the damage too; a
    # bullet granted on a Tribute is unsure
    assert profile(full.card("Neo Flamvell Hedgehog")).battle_mods == []
    assert profile(full.card("Worm Solid")).battle_mods == []
    assert [(b.kind, b.sure) for b in profile(full.card("Nagel's Protection")).battle_mods][-1] == ("double", False)
    volt = profile(full.card("Super-Electromagnetic Voltech Dragon")).battle_mods
    assert [(b.kind, b.sure, b.why) for b in volt] == [("piercing", False, "granted on the condition its bullet names")]


def test_damage_gained_as_lp_once_per_turn_and_a_granted_bullet(full):
    """The three texts that gave the sweep findings on the bug-free core (docs/ocgcore-findings.md
    F33): Muscle Medic's "they gain that much LP, instead" is computed (BD-GAIN, every battle of
    the card, both players); Secure Gardna's "Once per turn, if you would take battle or effect
    damage, you take no damage" is known as no damage but not computed (whether it was used this
    turn); the Familiar-Possessed bullet "If you do, this card gets the following effect: ● ... inflict
    the difference" is piercing granted by the card's own Summon procedure: not computed."""
    assert _mods(full, "Muscle Medic") == [("gain", True, ("self",), "battler", "both", ())]
    medic = profile(full.card("Muscle Medic")).battle_mods[0]
    assert (medic.rule, medic.evidence.pattern) == ("BD-GAIN", "bd-gain") and RULES["BD-GAIN"].cite
    gardna = profile(full.card("Secure Gardna")).battle_mods
    assert [(b.kind, b.sure, b.self_only, b.to) for b in gardna] == [("no_damage", False, False, "you")]
    assert gardna[0].evidence.quote == "Once per turn, if you would take battle or effect damage, you take no damage."
    assert gardna[0].why.startswith("once per turn")
    for name in ("Familiar-Possessed - Hiita", "Familiar-Possessed - Wynn"):
        fam = profile(full.card(name)).battle_mods
        assert [(b.kind, b.sure, b.self_only, b.evidence.pattern) for b in fam] == [("piercing", False, True, "bd-pierce-difference")], name
        assert "granted by an effect of this card" in fam[0].why
    # a Gemini monster's bullet stays computed, with its `gemini` condition
    assert _mods(full, "Gemini Lancer")[0][1] is True
    # effect damage alone is no battle text; "inflicts battle or effect damage" is an event
    assert profile(full.card("D/D/D Oracle King d'Arc")).battle_mods == []
    assert profile(full.card("Trickstar Light Stage")).battle_mods == []


def test_the_reader_against_the_hand_labels(full, capsys):
    labels = tomllib.loads(LABELS.read_text(encoding="utf-8"))["battle"]
    found = right = labelled = sure = sure_right = 0
    wrong = []
    for card in labels:
        mods = profile(full.card(card["code"])).battle_mods
        want = sorted(m["kind"] for m in card["mods"])
        got = sorted(b.kind for b in mods)
        labelled += len(want)
        found += len(got)
        left = list(want)
        for b in mods:
            if b.kind in left:
                left.remove(b.kind)
                right += 1
                sure += b.sure
                sure_right += b.sure
            else:
                sure += b.sure
                wrong.append(f"{card['code']}: reader {b.kind} ({b.evidence.quote[:50]!r}), labels {want}")
        wrong += [f"{card['code']}: label {k} not found" for k in left]
    with capsys.disabled():
        print(f"\nbattle modifications against {len(labels)} hand-labelled cards: precision {right}/{found}, "
              f"recall {right}/{labelled}, computed (sure) {sure}, of which right {sure_right}")
        for w in wrong:
            print("   ", w)
    assert len(labels) >= 30
    assert right / found >= 0.9 and right / labelled >= 0.9, wrong
    assert sure_right == sure  # (a wording the reader computes is never a wrong kind)


# -- the checks, on an engine that forgets the texts ---------------------------------------------


def test_piercing_forgotten_is_caught(tmp_path):
    _es, r = _run(_board(tmp_path, ["Cyber End Dragon"], ["Mokey Mokey@defense"]))
    msgs = _msgs(r, "acc.battle-damage")
    assert msgs and signature_of("acc.battle-damage", msgs[0]) == "damage-differs", [v.message for v in r.violations]
    assert "gives P1 0, P2 3900 (with the text of Cyber End Dragon: piercing)" in msgs[0], msgs[0]


def test_cannot_be_destroyed_and_no_damage_forgotten_are_caught(tmp_path):
    _es, r = _run(_board(tmp_path, ["Battle Ox"], ["Yubel - The Ultimate Nightmare"]))
    d = _msgs(r, "acc.destroyed-by-battle")
    b = _msgs(r, "acc.battle-damage")
    assert d and "destroyed by battle [Yubel - The Ultimate Nightmare [P2 M1]], the calculation gives []" == d[0], [v.message for v in r.violations]
    assert b and "gives P1 0, P2 0 (with the text of Yubel - The Ultimate Nightmare: no_damage)" in b[0], b


def test_a_text_whose_condition_does_not_hold_changes_nothing_and_is_judged(tmp_path):
    # Lion Alligator alone (no other Reptile) does not pierce; Rocket Warrior in the opponent's
    # Battle Phase is destroyed and its controller takes the damage; Wattkiwi attacked (not attacking)
    for p1, p2 in ((["Lion Alligator"], ["Mokey Mokey@defense"]), (["Battle Ox"], ["Rocket Warrior"]), (["Battle Ox"], ["Wattkiwi"])):
        es, r = _run(_board(tmp_path, p1, p2))
        assert not r.violations, (p1, p2, [(v.prop, v.message) for v in r.violations])
        assert r.props["acc.battle-damage"].checked > 0 and r.props["acc.destroyed-by-battle"].checked > 0, (p1, p2)
        assert not es.not_judged, es.not_judged


def test_an_unsure_wording_is_not_judged_and_names_the_sentence(tmp_path):
    es, r = _run(_board(tmp_path, ["Speedroid Hexasaucer"], ["Mokey Mokey"]))
    assert not _msgs(r, "acc.battle-damage"), [v.message for v in r.violations]
    reasons = es.not_judged.get("acc.battle-damage", set())
    assert any(x.startswith("Speedroid Hexasaucer: its text \"Both players take any battle damage from attacks involving this card.\" (other, BD-OTHER)")
               for x in reasons), reasons


def test_damage_taken_where_the_text_gains_it_as_lp_is_caught(tmp_path):
    # Muscle Medic (2200) attacked by Battle Ox (1700) and attacking Mokey Mokey (300): no battle
    # damage to anyone; the engine that forgets the text deals 500 / 1900
    for p1, p2, gives in ((["Battle Ox"], ["Muscle Medic"], "gives P1 0, P2 0 (with the text of Muscle Medic: gain)"),
                          (["Muscle Medic"], ["Mokey Mokey"], "gives P1 0, P2 0 (with the text of Muscle Medic: gain)")):
        _es, r = _run(_board(tmp_path, p1, p2))
        msgs = _msgs(r, "acc.battle-damage")
        assert msgs and signature_of("acc.battle-damage", msgs[0]) == "damage-differs", (p1, p2, [v.message for v in r.violations])
        assert gives in msgs[0], msgs[0]


def test_once_per_turn_and_granted_texts_are_not_judged(tmp_path):
    for p1, p2, card in ((["Battle Ox"], ["Secure Gardna"], "Secure Gardna"),
                         (["Familiar-Possessed - Hiita"], ["Mokey Mokey@defense"], "Familiar-Possessed - Hiita")):
        es, r = _run(_board(tmp_path, p1, p2))
        assert not _msgs(r, "acc.battle-damage"), [v.message for v in r.violations]
        reasons = es.not_judged.get("acc.battle-damage", set())
        assert any(x.startswith(f"{card}: its text") for x in reasons), (card, reasons)
    # Secure Gardna's "you take no damage" can change only its controller's damage: a battle where
    # that player takes none anyway (Gardna attacks Mokey Mokey) is judged
    es, r = _run(_board(tmp_path, ["Secure Gardna"], ["Mokey Mokey"]))
    assert r.props["acc.battle-damage"].checked > 0 and not _msgs(r, "acc.battle-damage")
    assert not es.not_judged.get("acc.battle-damage"), es.not_judged



# -- the protection wordings F36 found unread (issue 30: acc.destroyed-by-battle [destroyed-differs]) --


def test_the_older_protection_wordings_are_read(full):
    """"is not destroyed as a result of battle" (self, with "While this card is in face-up Attack
    Position" as a condition; an Equip Card's "The monster equipped with this card ...") and "This
    card cannot destroy monsters by battle" (the monster it battles): computed, each with its rule."""
    assert _mods(full, "Reaper on the Nightmare") == [("indestructible", True, ("self",), None, None, ())]
    assert _mods(full, "The Unhappy Girl") == [("indestructible", True, ("self",), None, None, (("self_attack_position",),))]
    assert _mods(full, "Heart of Clear Water") == [("indestructible", True, ("equipped",), None, None, ())]
    assert _mods(full, "Blackwing - Abrolhos the Megaquake") == [("cannot_destroy", True, ("self",), "battler", None, ())]
    b = profile(full.card("Blackwing - Abrolhos the Megaquake")).battle_mods[0]
    assert (b.rule, b.evidence.pattern, b.evidence.quote) == ("BD-CANNOT-DESTROY", "bd-cannot-destroy", "This card cannot destroy monsters by battle.")
    assert RULES["BD-CANNOT-DESTROY"].cite
    # "that battle" (the battle its own Special Summon starts) stays unsure: it is not computed
    assert [(k, s) for k, s, *_ in _mods(full, "Construction Train Signal Red")] == [("indestructible", False)]


def test_the_older_protection_wordings_forgotten_are_caught(tmp_path):
    # Battle Ox (1700) attacks Reaper on the Nightmare (800) and The Unhappy Girl (400, Attack
    # Position): neither is destroyed; Blackwing - Abrolhos (2600) attacked by Battle Ox: Battle Ox is
    # not destroyed. The engine that forgets the texts destroys each.
    for p1, p2, gives in ((["Battle Ox"], ["Reaper on the Nightmare"], "destroyed by battle [Reaper on the Nightmare [P2 M1]], the calculation gives []"),
                          (["Battle Ox"], ["The Unhappy Girl"], "destroyed by battle [The Unhappy Girl [P2 M1]], the calculation gives []"),
                          (["Battle Ox"], ["Blackwing - Abrolhos the Megaquake"], "destroyed by battle [Battle Ox [P1 M1]], the calculation gives []")):
        _es, r = _run(_board(tmp_path, p1, p2))
        msgs = _msgs(r, "acc.destroyed-by-battle")
        assert msgs and signature_of("acc.destroyed-by-battle", msgs[0]) == "destroyed-differs", (p2, [v.message for v in r.violations])
        assert msgs[0] == gives, msgs[0]
    # The Unhappy Girl in Defense Position: its condition does not hold, the engine is right, judged
    es, r = _run(_board(tmp_path, ["Battle Ox"], ["The Unhappy Girl@defense"]))
    assert r.props["acc.destroyed-by-battle"].checked > 0 and not _msgs(r, "acc.destroyed-by-battle"), [v.message for v in r.violations]
    assert not es.not_judged.get("acc.destroyed-by-battle"), es.not_judged


def test_a_replacement_from_the_graveyard_is_not_judged(tmp_path):
    """Relinkuriboh in its controller's GY ("If your monster would be destroyed by battle, you can
    banish this card from your GY instead"): that player's battles are not judged, and the reason
    names the card; in the other player's GY it changes nothing."""
    _need(FULL)
    for gy, judged in (("p2", False), ("p1", True)):
        f = tmp_path / f"gy-{gy}.toml"
        pile = {side: 'graveyard = ["Relinkuriboh"]\n' if side == gy else "" for side in ("p1", "p2")}
        f.write_text('name = "gy"\nturn = 2\nturn_player = 1\n[p1]\nlp = 8000\nmonsters = [{ zone = 1, card = "Battle Ox", position = "attack" }]\n'
                     + pile["p1"] + '[p2]\nlp = 8000\nmonsters = [{ zone = 1, card = "Mokey Mokey", position = "attack" }]\n' + pile["p2"],
                     encoding="utf-8")
        es, r = _run(load_board(f, f.name, cards_db=FULL))
        assert not _msgs(r, "acc.destroyed-by-battle"), [v.message for v in r.violations]
        reasons = es.not_judged.get("acc.destroyed-by-battle", set())
        if judged:
            assert not reasons and r.props["acc.destroyed-by-battle"].checked > 0, reasons
        else:
            assert any(x.startswith("Relinkuriboh: its text \"If your monster would be destroyed by battle, you can banish this card from your GY instead.\"")
                       and "acts from the Graveyard" in x for x in reasons), reasons

# -- the real core --------------------------------------------------------------------------------


def test_the_real_core_pierces_as_the_text_says_and_the_check_holds(tmp_path, run_cli, monkeypatch):
    _need(LIB, SCRIPTS, CARDS, FULL)
    f = tmp_path / "pierce.toml"
    f.write_text('name = "piercing"\nturn = 2\nturn_player = 1\n[p1]\nlp = 8000\n'
                 'monsters = [{ zone = 1, card = "Cyber End Dragon", position = "attack" }]\n'
                 '[p2]\nlp = 8000\nmonsters = [{ zone = 1, card = "Mokey Mokey", position = "defense" }]\n', encoding="utf-8")
    out = tmp_path / "r.json"
    code, stdout, stderr = run_cli("check", str(f), "--engine", "ocgcore", "--cards-db", FULL, "--invariants", INVS, "--json", str(out))
    assert code == 0, stdout[-3000:] + stderr[-2000:]
    b = json.loads(out.read_text())["boards"][0]
    checked = {i["id"]: (i["checked"], i["verdict"]) for i in b["invariants"]}
    for inv in INVS.split(","):
        assert checked[inv][1] == "held" and checked[inv][0] > 0, (inv, checked[inv])


def test_a_crystal_beast_left_on_the_field_after_the_damage_step_is_caught(tmp_path):
    """damage.destroyed-mark waits for a monster whose text changes where it goes when destroyed
    (002:140: "Crystal Beast Amber Mammoth", whose controller the EDOPro core asks first), but not
    past the Damage Step: an engine that leaves it on the field is caught as the Damage Step ends."""
    board = _board(tmp_path, ["Battle Ox"], ["Crystal Beast Amber Mammoth"])
    for engine, want in ((PE.KeepsOnField("Crystal Beast Amber Mammoth"), True), (PE.Offers("no such card", ()), False)):
        r = explore(EngineSystem(engine, board, select("damage.destroyed-mark")))
        msgs = _msgs(r, "damage.destroyed-mark")
        if want:
            assert msgs and msgs[0] == "Crystal Beast Amber Mammoth [P2 M1] was destroyed by battle but is still on the field at the end of the Damage Step", msgs
            assert signature_of("damage.destroyed-mark", msgs[0]) == "marked-stays-after-damage-step"
        else:
            assert not msgs and r.props["damage.destroyed-mark"].checked > 0, msgs


def test_a_player_who_takes_no_damage_is_a_battle_modification(full) -> None:
    """Ghostrick Parade's "Your opponent takes no damage." (a Continuous Spell) prevents battle
    damage too: a no-damage modification the reader does not compute (its S&T-Zone text makes
    acc.battle-damage "not judged"); before, its sentence was not read at all and the calculation
    without it was a false finding on the core (F36)."""
    assert _mods(full, "Ghostrick Parade") == [("no_damage", False, ("self",), None, None, ())]


def test_a_card_type_is_not_a_monster_type(full) -> None:
    """"If a Ritual Monster you control attacks a Defense Position monster, inflict piercing battle
    damage" (Cyber Angel Dakini) was computed as piercing for monsters of the Type "Ritual", which
    none is: the core's piercing was a false finding (F36). A card type ("Ritual", "Normal") or a
    position ("a Set monster") is no Type: such a sentence is not computed (not judged)."""
    for name in ("Cyber Angel Dakini", "Lancephorhynchus", "Subterror Nemesis Defender"):
        ((kind, sure, *_rest),) = _mods(full, name)
        assert not sure, name
    assert _mods(full, "Lion Alligator")[0][2] == ("race", "Reptile", False)  # (a Type still is)
