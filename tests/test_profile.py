"""Card data and card profiles: bpcheck.model.cdb (the cards.cdb reader) and bpcheck.model.profile
(the facts the invariants need, read from a card's data row and its English text; docs/profiles.md).

The full database is the kit's ``../shared/ocgcore/cards-full.cdb`` (or $OCG_CARDS_FULL); without
it the tests that need it skip and say why, unless BPCHECK_REQUIRE_OCGCORE=1, where they fail.
The bad-input tests build their own small files and always run.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from bpcheck.errors import InputError
from bpcheck.model import cdb as cdbmod
from bpcheck.model.cdb import CardDB, decode_row

ROOT = Path(__file__).resolve().parents[1]
FULL = Path(os.environ.get("OCG_CARDS_FULL") or ROOT.parent / "shared" / "ocgcore" / "cards-full.cdb")


def _need_full() -> None:
    if not FULL.is_file():
        msg = f"the full card database is absent ({FULL}; set OCG_CARDS_FULL): these tests read its rows"
        if os.environ.get("BPCHECK_REQUIRE_OCGCORE") == "1":
            pytest.fail(msg)
        pytest.skip(msg)


_DB: CardDB | None = None


@pytest.fixture
def full() -> CardDB:
    global _DB
    _need_full()
    if _DB is None:
        _DB = CardDB(FULL)
    return _DB


# ---------------------------------------------------------------------------------------------
# cdb: decoding known rows of cards-full.cdb
# ---------------------------------------------------------------------------------------------

def test_cdb_normal_monster(full: CardDB) -> None:
    c = full.card(46986414)
    assert (c.name, c.kind, c.subtype, c.type_names) == ("Dark Magician", "monster", "Normal", ["Monster", "Normal"])
    assert (c.atk, c.def_, c.level, c.races, c.attributes) == (2500, 2100, 7, ["Spellcaster"], ["DARK"])
    assert c.lscale is None and c.link_markers == 0


def test_cdb_flip_and_effect_bits(full: CardDB) -> None:
    c = full.card("Hane-Hane")
    assert c.type == 0x200021 and c.type_names == ["Monster", "Effect", "Flip"]
    assert c.subtype == "Effect"


def test_cdb_spell_and_trap_subtypes(full: CardDB) -> None:
    expect = {
        "Book of Moon": ("spell", "Quick-Play"), "Magic Jammer": ("trap", "Counter"),
        "Mirror Force": ("trap", "Normal"), "Call of the Haunted": ("trap", "Continuous"),
        "Umi": ("spell", "Field"), "United We Stand": ("spell", "Equip"), "Dark Hole": ("spell", "Normal"),
        "Spellbinding Circle": ("trap", "Continuous"),
    }
    for name, (kind, sub) in expect.items():
        c = full.card(name)
        assert (c.kind, c.subtype) == (kind, sub), name


def test_cdb_pendulum_scales_from_level_upper_bytes(full: CardDB) -> None:
    c = full.card("D/D Savant Thomas")
    raw = 101056520  # 0x06060008 in the datas row
    assert c.level == raw & 0xFF == 8
    assert (c.lscale, c.rscale) == (6, 6)
    assert "Pendulum" in c.type_names


def test_cdb_link_markers_in_def(full: CardDB) -> None:
    c = full.card("Double Headed Anger Knuckle")
    assert c.subtype == "Link" and c.level == 2  # the Link Rating
    assert c.def_ is None and c.link_markers == 34 and c.markers == ["Bottom", "Right"]
    assert full.card("Decode Talker").markers == ["Bottom-Left", "Bottom-Right", "Top"]


def test_cdb_question_mark_atk() -> None:
    # Helios - The Primordial Sun's row in the kit's cards.sql: atk and def are -2 ("?")
    c = decode_row((54493213, 3, 0, 0, 33, -2, -2, 4, 128, 16, 8192), "Helios - The Primordial Sun", "")
    assert c.atk is None and c.def_ is None and c.to_dict()["atk"] is None


def test_cdb_setcodes_are_four_16_bit_parts() -> None:
    packed = 0x00AF | (0x006E << 16) | (0x1234 << 48)
    c = decode_row((1, 3, 0, packed, 17, 0, 0, 1, 1, 1, 0), "X", "")
    assert c.setcodes == (0xAF, 0x6E, 0x1234)


def test_cdb_xyz_rank_and_tuner(full: CardDB) -> None:
    x = full.card("Number 39: Utopia")
    assert x.subtype == "Xyz" and x.level == 4 and x.to_dict()["rank"] == 4
    t = full.card("Junk Synchron")
    assert "Tuner" in t.type_names


def test_cdb_alias_and_name_lookup(full: CardDB) -> None:
    # several rows share the name "Dark Magician" (alternate artworks): the row without alias wins
    c = full.card("Dark Magician")
    assert c.alias == 0 and c.code == 46986414
    alts = [k for k in full if k.name == "Dark Magician" and k.alias]
    assert alts and all(a.alias == 46986414 for a in alts)
    assert full.card(str(46986414)) is c


def test_cdb_unknown_card_did_you_mean(full: CardDB) -> None:
    with pytest.raises(InputError) as e:
        full.card("dark magician", field="board.card[0].name")
    assert e.value.file == str(FULL) and e.value.field == "board.card[0].name"
    assert "no card named 'dark magician'" in e.value.problem and "'Dark Magician'" in e.value.problem
    with pytest.raises(InputError) as e:
        full.card("Mirror Farce")
    assert "did you mean" in e.value.problem and "'Mirror Force'" in e.value.problem
    with pytest.raises(InputError) as e:
        full.card(12345)
    assert e.value.problem == "no card with passcode 12345"


def test_cdb_reads_lazily_and_deterministically(full: CardDB) -> None:
    a = CardDB(FULL)
    assert a._cards is None  # nothing read at construction
    b = CardDB(FULL)
    da = json.dumps([c.to_dict() for c in a], sort_keys=True)
    assert da == json.dumps([c.to_dict() for c in b], sort_keys=True)
    assert len(a) == 10628


# ---------------------------------------------------------------------------------------------
# cdb: bad files -> InputError(file, field, problem)
# ---------------------------------------------------------------------------------------------

def _make_db(path: Path, sql: str) -> Path:
    con = sqlite3.connect(path)
    con.executescript(sql)
    con.commit()
    con.close()
    return path


GOOD_SCHEMA = (
    "CREATE TABLE datas(id integer primary key,ot integer,alias integer,setcode integer,type integer,"
    "atk integer,def integer,level integer,race integer,attribute integer,category integer);"
    "CREATE TABLE texts(id integer primary key,name text,desc text);"
)


def test_cdb_missing_file(tmp_path: Path) -> None:
    p = tmp_path / "nope.cdb"
    with pytest.raises(InputError) as e:
        CardDB(p).card(1)
    assert (e.value.file, e.value.field) == (str(p), "") and "no such file" in e.value.problem


def test_cdb_not_sqlite(tmp_path: Path) -> None:
    p = tmp_path / "cards.cdb"
    p.write_bytes(b"this is not a database, it is a text file long enough to have a header" * 3)
    with pytest.raises(InputError) as e:
        len(CardDB(p))
    assert e.value.file == str(p) and "not a SQLite database" in e.value.problem


def test_cdb_missing_table(tmp_path: Path) -> None:
    p = _make_db(tmp_path / "c.cdb", "CREATE TABLE datas(id integer);")
    with pytest.raises(InputError) as e:
        len(CardDB(p))
    assert e.value.field == "datas.ot" and e.value.problem == "column missing"
    p2 = _make_db(tmp_path / "d.cdb", GOOD_SCHEMA.split(";")[0] + ";")
    with pytest.raises(InputError) as e:
        len(CardDB(p2))
    assert e.value.field == "texts" and "table missing" in e.value.problem


def test_cdb_bad_values(tmp_path: Path) -> None:
    p = _make_db(tmp_path / "c.cdb", GOOD_SCHEMA + "INSERT INTO datas VALUES(7,3,0,0,'x',0,0,1,1,1,0);"
                 "INSERT INTO texts VALUES(7,'Seven','');")
    with pytest.raises(InputError) as e:
        len(CardDB(p))
    assert e.value.field == "datas[id=7].type" and "not an integer" in e.value.problem
    p2 = _make_db(tmp_path / "d.cdb", GOOD_SCHEMA + "INSERT INTO datas VALUES(7,3,0,0,17,0,0,1,1,1,0);")
    with pytest.raises(InputError) as e:
        len(CardDB(p2))
    assert e.value.field == "texts[id=7]" and "no texts row" in e.value.problem


def test_cdb_small_file_roundtrip(tmp_path: Path) -> None:
    p = _make_db(tmp_path / "c.cdb", GOOD_SCHEMA + "INSERT INTO datas VALUES(44095762,3,0,0,4,0,0,0,0,0,2);"
                 "INSERT INTO texts VALUES(44095762,'Mirror Force','When an opponent''s monster declares an attack: "
                 "Destroy all your opponent''s Attack Position monsters.');")
    db = CardDB(p)
    c = db.card("Mirror Force")
    assert (c.code, c.kind, c.subtype) == (44095762, "trap", "Normal")
    assert db.card(44095762) is c
    assert cdbmod.bit_names(0x100004, cdbmod.TYPE_NAMES) == ["Trap", "Counter"]


# ---------------------------------------------------------------------------------------------
# profile: the reader against the hand-labelled sample (tests/data/profile_labels.toml)
# ---------------------------------------------------------------------------------------------

import tomllib  # noqa: E402

from bpcheck.model.profile import DAMAGE_RESPONSE_RX, RULES, SUBSTEPS, UNKNOWN, PATTERNS, profile  # noqa: E402

LABELS = ROOT / "tests" / "data" / "profile_labels.toml"
# Precision floors, set from the measurement of docs/profiles.md ("Measured"): the reader's
# decided values must match the hand labels at least this often, overall and per field.
# Measured at this commit: 0.978 overall (2207/2257), kind 0.979, opt 0.905, speed 1.000, events
# 0.902, windows 0.953, ds 0.982; the floors sit 2-5 points below, so one new mislabelled effect
# does not fail the suite but a reader change that costs a field several effects does.
MIN_PRECISION = 0.95
MIN_FIELD_PRECISION = {"kind": 0.95, "opt": 0.85, "speed": 0.97, "events": 0.85, "windows": 0.9, "ds": 0.95}
YN = {"Y": True, "N": False, "?": UNKNOWN}


def _find_effect(prof, at: str):
    if at == "[activation]":
        return next((e for e in prof.effects if e.span is None), None)
    starts = [e for e in prof.effects if e.text.startswith(at)]
    if starts:
        return starts[0]
    return next((e for e in prof.effects if at in e.text), None)


def measure(db: CardDB) -> dict:
    """Per field: [decided and equal, decided, compared]; plus the mismatches."""
    labels = tomllib.loads(LABELS.read_text(encoding="utf-8"))["card"]
    stats = {f: [0, 0, 0] for f in MIN_FIELD_PRECISION}
    wrong: list[str] = []
    unmatched: list[str] = []
    extra_effects = 0
    for card in labels:
        prof = profile(db.card(card["code"]))
        if not card["effects"]:
            # a card labelled with no effects: the reader must find none either
            stats["kind"][2] += 1
            stats["kind"][1] += 1
            if prof.effects:
                wrong.append(f"{card['code']} {prof.name}: no effects expected, reader has {len(prof.effects)}")
                extra_effects += 1
            else:
                stats["kind"][0] += 1
            continue
        for lab in card["effects"]:
            eff = _find_effect(prof, lab["at"])
            if eff is None:
                unmatched.append(f"{card['code']} {prof.name}: no effect at {lab['at']!r}")
                for f in MIN_FIELD_PRECISION:
                    if f in lab or (f == "ds" and "ds" in lab):
                        stats[f][2] += 5 * 2 if f == "ds" else 1
                continue
            got = {
                "kind": eff.kind.value,
                "opt": eff.optional.value if eff.optional else None,
                "speed": eff.speed.value,
                "events": eff.events.value if eff.events.value == UNKNOWN else sorted(eff.events.value),
                "windows": eff.windows.value if eff.windows.value == UNKNOWN else sorted(eff.windows.value),
            }
            for f in ("kind", "opt", "speed", "events", "windows"):
                if f not in lab:
                    continue
                want = sorted(lab[f]) if isinstance(lab[f], list) else lab[f]
                stats[f][2] += 1
                if got[f] == UNKNOWN:
                    continue
                stats[f][1] += 1
                if got[f] == want:
                    stats[f][0] += 1
                else:
                    wrong.append(f"{card['code']} {prof.name} [{lab['at'][:40]}] {f}: label {want!r}, reader {got[f]!r}")
            if "ds" in lab:
                for rs, key in (("tcg", "ds"), ("ocg", "ds_ocg")):
                    want_s = lab.get(key, lab["ds"])
                    for i, sub in enumerate(SUBSTEPS):
                        stats["ds"][2] += 1
                        want = YN[want_s[i]]
                        g = eff.damage_step[rs][sub].value if eff.damage_step else None
                        if g == UNKNOWN:
                            continue
                        stats["ds"][1] += 1
                        if g == want:
                            stats["ds"][0] += 1
                        else:
                            rule = eff.damage_step[rs][sub].rule if eff.damage_step else "no activation"
                            wrong.append(f"{card['code']} {prof.name} [{lab['at'][:40]}] ds.{rs}.{sub}: label {want!r}, reader {g!r} ({rule})")
    return {"stats": stats, "wrong": wrong, "unmatched": unmatched, "cards": len(labels)}


def test_profile_against_hand_labels(full: CardDB, capsys) -> None:
    m = measure(full)
    stats = m["stats"]
    ok = sum(s[0] for s in stats.values())
    decided = sum(s[1] for s in stats.values())
    compared = sum(s[2] for s in stats.values())
    with capsys.disabled():
        print(f"\nprofile reader against {m['cards']} hand-labelled cards: precision {ok}/{decided} = {ok / decided:.3f}, "
              f"coverage {decided}/{compared} = {decided / compared:.3f}")
        for f, (a, d, c) in stats.items():
            print(f"  {f:<8} precision {a}/{d} = {a / max(d, 1):.3f}  coverage {d}/{c} = {d / max(c, 1):.3f}")
        print(f"  unmatched effects: {len(m['unmatched'])}; mismatches: {len(m['wrong'])}")
        for w in m["unmatched"] + m["wrong"]:
            print("   ", w)
    assert m["cards"] >= 150
    assert not m["unmatched"], m["unmatched"]
    assert ok / decided >= MIN_PRECISION
    for f, (a, d, _) in stats.items():
        assert d and a / d >= MIN_FIELD_PRECISION[f], (f, a, d)


# ---------------------------------------------------------------------------------------------
# profile: each phrase pattern and rule on real texts
# ---------------------------------------------------------------------------------------------

def _eff(db: CardDB, name: str, at: str):
    e = _find_effect(profile(db.card(name)), at)
    assert e is not None, (name, at)
    return e


def _ds(e, rs="tcg") -> str:
    return "".join({True: "Y", False: "N", UNKNOWN: "?"}[e.damage_step[rs][s].value] for s in SUBSTEPS)


def test_rules_all_cited() -> None:
    for r in RULES.values():
        assert r.cite and r.says, r.id
    for p in PATTERNS:
        assert p.rule in RULES, p.id


def test_counter_trap_speed_3_all_substeps(full: CardDB) -> None:
    e = _eff(full, "Magic Jammer", "When a Spell Card is activated")
    assert (e.kind.value, e.speed.value, _ds(e), _ds(e, "ocg")) == ("activation", 3, "YYYYY", "YYYYY")
    assert e.damage_step["tcg"]["start"].rule == "DS-COUNTER"
    assert e.speed.evidence[0].bit == "type&TYPE_COUNTER"


def test_normal_trap_not_in_damage_step_and_attack_window(full: CardDB) -> None:
    e = _eff(full, "Mirror Force", "When an opponent's monster declares an attack")
    assert (e.speed.value, _ds(e), e.windows.value) == (2, "NNNNN", ["attack_declared_by_opponent"])
    ev = e.windows.evidence[0]
    assert full.card("Mirror Force").text[ev.span[0]:ev.span[1]] == ev.quote


def test_atk_modifier_tcg_ocg(full: CardDB) -> None:
    e = _eff(full, "Rush Recklessly", "Target 1 face-up monster")
    assert (_ds(e), _ds(e, "ocg")) == ("YYNNN", "YYNNN")
    h = _eff(full, "Honest", "During the Damage Step")
    assert (h.kind.value, _ds(h), _ds(h, "ocg")) == ("quick", "YYYNN", "YY?NN")
    assert h.damage_step["ocg"]["during_calc"].rule == "DS-ATK-CALC-OCG-AMBIGUOUS"


def test_atk_changes_that_may_not_be_direct_are_unknown(full: CardDB) -> None:
    """002:48-53: only a direct ATK/DEF change may be activated in the Damage Step, and one that
    "might not alter ATK/DEF at resolution" may not; a change under a condition of its own clause, one
    of the effects to choose from, or effects for the rest of the turn on a kind of monster is left
    unknown (never read as direct); an LP gain "by the ATK" is no ATK change at all."""
    cases = {
        "Stronghold the Moving Fortress": ("DS-ATK-CONDITIONAL", 'While you control "Green Gadget",'),
        "Metamorphortress": ("DS-ATK-CONDITIONAL", "If Summoned this way,"),
        "Swift Samurai Storm!": ("DS-ATK-CONDITIONAL", 'Each turn, after the first time a "Six Samurai" monster you control battles,'),
        "Subterror Final Battle": ("DS-ATK-MODAL", "Activate 1 of these effects"),
        "Planckton": ("DS-ATK-LINGERING", "Apply these effects until the end of this turn"),
    }
    for name, (rule, why) in cases.items():
        act = profile(full.card(name)).effects[0]
        assert act.kind.value == "activation" and _ds(act) == "??NNN" and _ds(act, "ocg") == "??NNN", (name, _ds(act))
        d = act.damage_step["tcg"]["start"]
        assert d.rule == rule and RULES[rule].cite, (name, d.rule)
        assert [x.quote for x in d.evidence][-1] == why, (name, [x.quote for x in d.evidence])
    # a direct change keeps DS-ATK: a target's check "if that target is still face-up" is no condition
    pk = profile(full.card("The Phantom Knights of Lost Vambrace")).effects[0]
    assert (_ds(pk), pk.damage_step["tcg"]["start"].rule) == ("YYNNN", "DS-ATK")
    jav = profile(full.card("Enchanted Javelin")).effects[0]
    assert (_ds(jav), jav.damage_step["tcg"]["start"].rule) == ("NNNNN", "DS-NOT-LISTED")
    assert not [p for p in PATTERNS if p.means == "atk_change" and p.regex.search("Increase your Life Points by the ATK of 1 monster")]


def test_choosing_one_of_these_effects_is_no_activation_event(full: CardDB) -> None:
    """"you can select and activate 1 of these effects" chooses an effect: not an event "when ... is
    activated" (F36: Storm Shooter's Ignition effect read as a trigger); "When your opponent
    activates ..." still is one."""
    e = _eff(full, "Storm Shooter", "Once per turn, you can select and activate")
    assert (e.kind.value, e.speed.value, _ds(e)) == ("ignition", 1, "NNNNN")
    scorpion = _eff(full, "Dark Scorpion - Gorg the Strong", "When this card inflicts Battle Damage")
    assert scorpion.kind.value == "trigger" and "activation" not in scorpion.events.value, scorpion.events.value
    rx = next(p for p in PATTERNS if p.id == "ev-activation").regex
    assert rx.search("When your opponent activates a Spell Card") and rx.search("When a Trap Card is activated")
    assert not rx.search("you can select and activate 1 of these effects")


def test_damage_calculation_timing(full: CardDB) -> None:
    e = _eff(full, "Injection Fairy Lily", "If this card attacks or is attacked")
    assert (e.kind.value, e.optional.value, _ds(e), _ds(e, "ocg")) == ("trigger", True, "NNYNN", "NNYNN")
    k = _eff(full, "Kuriboh", "During damage calculation")
    assert (k.kind.value, k.speed.value, _ds(k)) == ("quick", 2, "NNYNN")
    r = _eff(full, "Reflect Bounder", "Before damage calculation")
    assert _ds(r) == "NYNNN"  # the first timing of its condition, not "at the start of the Damage Step"


def test_battle_destruction_trigger(full: CardDB) -> None:
    e = _eff(full, "Mystic Tomato", "When this card is destroyed by battle")
    assert e.events.value == ["destroyed_by_battle", "sent_to_gy"] and _ds(e) == "YYYYY"
    assert e.damage_step["tcg"]["end"].rule == "DS-OPT-TRIGGER"


def test_flip_and_mandatory(full: CardDB) -> None:
    e = _eff(full, "Man-Eater Bug", "FLIP:")
    assert (e.kind.value, e.optional.value, e.events.value, _ds(e)) == ("flip", False, ["flipped"], "YYYYY")
    g = _eff(full, "Grave Squirmer", "If this card is destroyed by battle")
    assert (g.optional.value, g.damage_step["tcg"]["start"].rule) == (False, "DS-MANDATORY")


def test_negation_quick_effects(full: CardDB) -> None:
    d = _eff(full, "Dark Paladin", "When a Spell Card is activated")
    assert (d.kind.value, _ds(d), _ds(d, "ocg")) == ("quick", "YYYYY", "YYYYY")
    a = _eff(full, "Ash Blossom & Joyous Spring", "When a card or effect is activated")
    assert (_ds(a), _ds(a, "ocg")) == ("YYYYY", "NNNNN")  # 002:58: TCG only
    assert "● Add a card from the Deck" in a.text  # the bullets are its list, not effects


def test_except_damage_step_and_ss_self_from_hand(full: CardDB) -> None:
    s = _eff(full, "Satellite Synchron", "If a monster(s) is Special Summoned")
    assert _ds(s) == "NNNNN" and s.damage_step["tcg"]["start"].rule == "DS-EXCEPT"
    assert "not_damage_step" in s.windows.value
    v = _eff(full, "Vendread Striges", "If this card is sent to the GY")
    assert _ds(v) == "YYYYY"  # from the GY: 002:71 is about the hand


def test_continuous_trap_activation(full: CardDB) -> None:
    sh = _eff(full, "Shadow Spell", "Activate this card by targeting")
    assert (sh.kind.value, _ds(sh)) == ("activation", "YYNNN")
    c = _eff(full, "Call of the Haunted", "Activate this card by targeting")
    assert _ds(c) == "NNNNN"
    sd = profile(full.card("Skill Drain")).effects[0]
    assert sd.span is None and sd.kind.value == "activation" and sd.speed.value == 2


def test_windows_curly_apostrophe_and_battle_phase(full: CardDB) -> None:
    e = _eff(full, "Superheavy Samurai Ninja Sarutobi", "Once per turn, during either player")
    assert (e.kind.value, e.windows.value) == ("quick", ["either_turn"])
    r = _eff(full, "Rebellion", "During either player's Battle Phase")
    assert r.windows.value == ["battle_phase", "either_turn"]


def test_unknown_not_guessed(full: CardDB) -> None:
    t = _eff(full, "Gladiator Beast Retiari", "At the end of the Battle Phase")
    assert t.kind.value == UNKNOWN and _ds(t) == "?????" and t.speed.value == UNKNOWN
    m = _eff(full, "Magna-Slash Dragon", "You can send 1 face-up")
    assert m.kind.value == UNKNOWN and m.kind.evidence[0].quote.startswith("You can send")


def test_pendulum_sections_and_materials(full: CardDB) -> None:
    p = profile(full.card("Dragodies, the Empowered Warrior"))
    assert [e.section for e in p.effects] == ["pendulum", "monster", "pendulum"]
    assert _ds(p.effects[0]) == "YNNNN"
    scale = p.effects[2]  # KIND-PENDULUM-SCALE: its activation as a Spell Card in a Pendulum Zone
    assert (scale.kind.value, scale.kind.rule, scale.speed.value, _ds(scale)) == ("activation", "KIND-PENDULUM-SCALE", 1, "NNNNN")
    assert not any(e.kind.rule == "KIND-PENDULUM-SCALE" for e in profile(full.card("Number 39: Utopia")).effects)
    x = profile(full.card("Number 39: Utopia"))
    assert x.effects[0].kind.value == "materials"
    assert profile(full.card("Dark Magician")).effects == []


def test_older_spell_trap_text_is_one_activation(full: CardDB) -> None:
    """TXT-ST-RESOLUTION: "Roll a six-sided die. All monsters your opponent currently controls lose
    ATK ..." is one activation whose resolution changes ATK (DS-ATK), not a die roll (DS-NOT-LISTED)
    and a continuous effect; a new effect ("You can banish this card from your GY") still starts one."""
    p = profile(full.card("Skull Dice"))
    assert [e.kind.value for e in p.effects] == ["activation"]
    assert p.effects[0].text.endswith("until the End Phase.") and _ds(p.effects[0]) == "YYNNN"
    assert p.effects[0].damage_step["tcg"]["start"].rule == "DS-ATK"
    # a structured text keeps its effects apart
    mf = profile(full.card("Mirror Force"))
    assert mf.effects[0].kind.value == "activation" and _ds(mf.effects[0]) == "NNNNN"


def test_life_points_equal_to_atk_is_not_an_atk_change(full: CardDB) -> None:
    """Dark Cure: "they gain Life Points equal to half the ATK of ..." changes LP, not ATK: its
    activation as a Continuous Trap is not allowed in the Damage Step by DS-CONT-TRAP."""
    act = profile(full.card("Dark Cure")).effects[0]
    assert act.kind.value == "activation" and _ds(act) == "NNNNN"


def test_response_to_damage_in_damage_step(full: CardDB) -> None:
    """DS-RESPOND-DAMAGE (002:63-64): "Numinous Healer" and "Attack and Receive" (named by the seed)
    activate in response to damage and may be activated in the Damage Step; a trigger on taking
    battle damage that Special Summons itself from the hand names its timing ("otherwise
    specified"); one on effect damage only does not qualify."""
    for name in ("Numinous Healer", "Attack and Receive"):
        act = next(e for e in profile(full.card(name)).effects if e.kind.value == "activation")
        assert _ds(act) == "YYYYY" and act.damage_step["tcg"]["after_calc"].rule == "DS-RESPOND-DAMAGE", name
        assert "take damage" in act.damage_step["tcg"]["start"].evidence[0].quote
    ir = _eff(full, "Interrupt Resistor", "When you take battle damage")
    assert _ds(ir) == "YYYYY" and ir.damage_step["ocg"]["end"].rule == "DS-RESPOND-DAMAGE"
    assert DAMAGE_RESPONSE_RX.search("If you take effect damage") is None
    assert DAMAGE_RESPONSE_RX.search("When you take damage from a card your opponent controls") is not None


def test_profile_json_deterministic(full: CardDB) -> None:
    cards = [full.card(n) for n in ("Honest", "Mirror Force", "D/D Savant Thomas", "Ash Blossom & Joyous Spring")]
    a = json.dumps([profile(c).to_dict() for c in cards], sort_keys=True)
    b = json.dumps([profile(c).to_dict() for c in cards], sort_keys=True)
    assert a == b and json.loads(a)[0]["name"] == "Honest"


def test_a_direct_attack_declared_is_an_attack_declared(full: CardDB) -> None:
    """"When an opponent's monster declares a direct attack: You can Special Summon this card"
    (Battle Fader, Gagaga Gardna, 54 more cards of cards-full.cdb) is a trigger on the attack
    declaration in the opponent's attack window, as "declares an attack"; it was read as an
    Ignition effect (the attack-declared words knew only "an attack")."""
    for name in ("Battle Fader", "Gagaga Gardna"):
        e = _eff(full, name, "When an opponent's monster declares a direct attack")
        assert (e.kind.value, e.events.value, e.windows.value) == ("trigger", ["attack_declared"], ["attack_declared_by_opponent"]), name
