"""`bpcheck cards [NAME] [--cards-db FILE] [--profile] [--json]`: the card pool, or one card: a
pool card, or with ``--cards-db`` any card of a card database (by name or passcode) with its facts
from its ``datas`` row and, with ``--profile``, its profile read from its data and text
(bpcheck.model.profile, docs/profiles.md)."""

from __future__ import annotations

import argparse
import json
import sys

from bpcheck.cli.exits import EXIT_BAD_INPUT, EXIT_OK
from bpcheck.errors import InputError
from bpcheck.model.cards import builtin_pool, card_summary
from bpcheck.model.cdb import CardDB, open_db
from bpcheck.model.profile import SUBSTEPS, CardProfile, Decision, EffectProfile, profile
from bpcheck.reports.safe import one_line


def _err(e: InputError) -> None:
    print(one_line(f"bpcheck: error: {e.render()}"), file=sys.stderr)


def cmd_cards(args: argparse.Namespace) -> int:
    try:
        return _cards(args)
    except InputError as e:
        _err(e)
        return EXIT_BAD_INPUT


def _cards(args: argparse.Namespace) -> int:
    pool = builtin_pool()
    db = _database(args.cards_db) if args.cards_db else None
    if args.profile and db is None:
        raise InputError("--profile", "", "a profile is read from a card's database row and text: name the database with --cards-db FILE")
    if not args.name:
        if args.profile:
            raise InputError("--profile", "", "name the card to profile: bpcheck cards --cards-db FILE NAME --profile")
        return _list(pool, db, args.json)
    if db is None:
        if args.name not in pool:
            close = [n for n in pool.names() if args.name.lower() in n.lower()]
            hint = f"; did you mean: {', '.join(close)}" if close else ""
            more = "" if close else " (a card of a card database: --cards-db FILE)"
            raise InputError("<card pool>", "name", f"unknown card {args.name!r}{hint}{more}")
        d = card_summary(pool[args.name])
        if args.json:
            print(json.dumps(d, indent=2))
        else:
            for k, v in d.items():
                print(f"{k:10} {v}")
        return EXIT_OK
    card = db.card(args.name, "name")  # a passcode or an exact name; unknown: did you mean
    facts = card.to_dict()
    facts["text"] = card.text
    if args.json:
        out = {"card": facts, "database": db.path}
        if args.profile:
            out["profile"] = profile(card).to_dict()
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return EXIT_OK
    for line in fact_lines(facts):
        print(line)
    if args.profile:
        print()
        for line in profile_lines(profile(card)):
            print(line)
    return EXIT_OK


def _database(path: str) -> CardDB:
    db = open_db(path)
    len(db)  # read now: a file that is not a card database is bad input before anything else
    return db


def _list(pool, db: CardDB | None, as_json: bool) -> int:
    rows = [card_summary(c) for c in pool]
    if as_json:
        print(json.dumps(rows if db is None else {"pool": rows, "database": {"path": db.path, "cards": len(db)}}, indent=2))
        return EXIT_OK
    for d in rows:
        stats = f"{d['atk']}/{d['def_']}" if "atk" in d else ""
        print(f"{d['passcode']}  {d['kind']:7} {d['subtype']:10} {stats:>9}  {d['name']}")
    print(f"{len(rows)} cards")
    if db is not None:
        print(f"{db.path}: {len(db)} cards (show one: bpcheck cards --cards-db {db.path} NAME [--profile])")
    return EXIT_OK


def _stat(v) -> str:
    return "?" if v is None else str(v)


def fact_lines(f: dict) -> list[str]:
    """A database card's facts, one per line."""
    lines = [f"{f['name']} ({f['code']})"]
    kind = f"{f['kind']} / {f['subtype']} ({', '.join(f['type_names'])})"
    lines.append(f"  {'type':12} {kind}")
    if f["alias"]:
        lines.append(f"  {'alias':12} {f['alias']} (an alternate artwork of that passcode)")
    if f["kind"] == "monster":
        for key in ("level", "rank", "link_rating"):
            if key in f:
                lines.append(f"  {key.replace('_', ' '):12} {f[key]}")
        lines.append(f"  {'attribute':12} {', '.join(f['attributes']) or '-'}")
        lines.append(f"  {'type (race)':12} {', '.join(f['races']) or '-'}")
        lines.append(f"  {'ATK/DEF':12} {_stat(f['atk'])}/{'-' if 'link_markers' in f else _stat(f['def'])}")
        if "lscale" in f:
            lines.append(f"  {'scales':12} {f['lscale']}/{f['rscale']}")
        if "link_markers" in f:
            lines.append(f"  {'link arrows':12} {', '.join(f['link_markers'])}")
    if f["setcodes"]:
        lines.append(f"  {'archetypes':12} {', '.join(f'{s:#06x}' for s in f['setcodes'])}")
    lines.append(f"  {'text':12} {one_line(f['text'])}")
    return lines


def _value(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        return ", ".join(str(x) for x in v) if v else "none"
    return str(v)


def _evidence(d: Decision) -> str:
    parts = []
    for e in d.evidence:
        if e.bit is not None:
            parts.append(f"data {e.bit}")
        elif e.span is not None:
            quote = one_line(e.quote or "")
            parts.append(f"text {e.span[0]}-{e.span[1]} {quote!r}" + (f" ({e.pattern})" if e.pattern else ""))
        elif e.pattern is not None:
            parts.append(f"pattern {e.pattern}")
    return "; ".join(parts)


def _decision_line(label: str, d: Decision) -> list[str]:
    out = [f"    {label:10} {_value(d.value):24} {d.rule}"]
    ev = _evidence(d)
    if ev:
        out.append(f"    {'':10} evidence: {ev}")
    return out


def _effect_lines(e: EffectProfile) -> list[str]:
    where = f"text {e.span[0]}-{e.span[1]}" if e.span else "implicit (the card's activation)"
    head = f"  effect {e.index + 1}" + (f" ({e.number})" if e.number is not None else "") + f" [{e.section}, {where}]"
    lines = [head]
    if e.text:
        lines.append(f"    {one_line(e.text)}")
    lines += _decision_line("kind", e.kind)
    if e.optional is not None:
        lines += _decision_line("optional", e.optional)
    lines += _decision_line("speed", e.speed)
    lines += _decision_line("events", e.events)
    lines += _decision_line("windows", e.windows)
    if e.once_per_turn:
        lines.append(f"    {'once':10} once per turn")
    if e.damage_step is None:
        lines.append(f"    {'Damage St.':10} not activated (no activation in the Damage Step)")
        return lines
    lines.append("    Damage Step, may it be activated (per sub-step; rule and evidence below):")
    lines.append((f"      {'ruleset':8}" + "".join(f" {s:12}" for s in SUBSTEPS)).rstrip())
    for rs, sub in e.damage_step.items():
        lines.append((f"      {rs:8}" + "".join(f" {_value(sub[s].value):12}" for s in SUBSTEPS)).rstrip())
    every = len(e.damage_step) * len(SUBSTEPS)
    seen: list[tuple[str, str]] = []
    for rs, sub in e.damage_step.items():
        for s in SUBSTEPS:
            d = sub[s]
            key = (d.rule, _evidence(d))
            if key in seen:
                continue
            seen.append(key)
            cells = [f"{r}/{t}" for r, x in e.damage_step.items() for t in SUBSTEPS if (x[t].rule, _evidence(x[t])) == key]
            shown = "every sub-step, both rulesets" if len(cells) == every else ", ".join(cells)
            lines.append(f"      {d.rule}: {shown}" + (f"; evidence: {key[1]}" if key[1] else ""))
    return lines


def profile_lines(p: CardProfile) -> list[str]:
    """A card's profile, readably: per effect its kind, speed, events, windows and Damage Step
    allowance per sub-step and ruleset, each with the rule and the evidence that decided it."""
    n = len(p.effects)
    state = "every decision made" if p.decided else "some decisions unknown"
    lines = [f"profile of {p.name} ({p.code}): {n} effect{'s' if n != 1 else ''}, {state}; Battle Phase relevant: {'yes' if p.battle_relevant else 'no'}"]
    if not p.effects:
        lines.append("  no effects")
    for e in p.effects:
        lines += _effect_lines(e)
    lines.append("rules: docs/profiles.md (each rule's seed passage)")
    return lines
