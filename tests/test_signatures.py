"""Every violation has a signature (invariants/signatures.py): each message an invariant can return
holds exactly one phrase of its invariant, in its fixed text, so that the signature never depends
on a card name or a number an engine sent. Read from the invariants' source, so a message no test
reaches is checked too."""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap

import pytest

from bpcheck.invariants import REGISTRY
from bpcheck.invariants.signatures import COMMON, SIGNATURES, UNCLASSIFIED, Signed, signature_of, signatures_of

HOLE = "\x00"  # a formatted value in a message template

# Module-level helpers whose messages an invariant returns as they are (their returns are read too).
HELPERS = {
    "turn.phase-order": ["_walk"],
    "turn.battle-steps": ["_walk"],
    "replay.iff": ["_chain_end", "_settled"],
    "attack.legal-offered": ["_replay_offered"],
}
# Returns that are not message literals, each with why it is fine (unparsed source -> reason).
NOT_MESSAGES = {
    "changes": "the step walk's verdict (turn._walk, read as a helper)",
    "r": "replay.iff's verdict of the chain's end: True or None here (its messages are signed tuples)",
    "signed(*how) if how[0] else None": "a signed message of replay._settled (its tuples are read)",
    "signed(r[1], r[2]) if r[0] == 'now' else None": "a signed message of replay._chain_end (its tuples are read)",
    "out": "the step walk's list of step changes, not a message (turn._walk)",
    "_LAST[1]": "the step walk's cached result (turn._changes)",
    "_replay_offered(obs, actions, ctx, mon['replay'])": "attack.legal-offered at a replay (offered._replay_offered, read as a helper)",
    "mods": "a NotJudged verdict of accounting.text_mods (a card text whose wording the profile does not compute)",
    "expect": "a NotJudged verdict of accounting._with_text (two scalings at once, an odd amount halved)",
    "cur": "a NotJudged verdict of accounting._at_calculation (a halving at damage calculation of an odd value)",
    "why": "a NotJudged verdict of accounting.text_mods's unsure list (an unsure \"you take no damage\" where that player would take some)",
    "_triggered(t.cards, e['card'], e.get('effect')) and (triggered is None or e['card_uid'] in triggered)": "chain.spell-speed's was_trigger helper (a boolean, not a message)",
}


def _templates(node) -> list[str] | None:
    """The message templates a string expression can give (formatted values as HOLE), or None
    when it is not a string expression."""
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return ["".join(v.value if isinstance(v, ast.Constant) else HOLE for v in node.values)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _templates(node.left), _templates(node.right)
        if left is None or right is None:
            return None
        return [a + b for a in left for b in right]
    if isinstance(node, ast.IfExp):
        a, b = _templates(node.body), _templates(node.orelse)
        if a is None and b is None:
            return None
        return (a or [HOLE]) + (b or [HOLE])
    return None


def _holds(template: str, phrase: str) -> bool:
    """Whether every message of `template` holds `phrase` in its fixed text (where the phrase's
    anchor says)."""
    if phrase.startswith("^"):
        return template.split(HOLE)[0].startswith(phrase[1:])
    if phrase.endswith("$"):
        return template.split(HOLE)[-1].endswith(phrase[:-1])
    return any(phrase in chunk for chunk in template.split(HOLE))


def _functions(inv_id):
    fn = REGISTRY[inv_id].fn
    mod = sys.modules[fn.__module__]
    return [fn, *(getattr(mod, name) for name in HELPERS.get(inv_id, ()))]


def _messages(inv_id):
    """(template, explicit signature or None, where) of every message `inv_id` can give; and the
    returns that are neither messages nor listed in NOT_MESSAGES."""
    found, odd = [], []
    for fn in _functions(inv_id):
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        names = set(signatures_of(inv_id))
        for node in ast.walk(tree):
            if isinstance(node, ast.Tuple):  # (SIG, message) / ("now", SIG, message): a signed message
                elts = node.elts
                for i, e in enumerate(elts[:-1]):
                    if isinstance(e, ast.Constant) and e.value in names:
                        for t in _templates(elts[i + 1]) or []:
                            found.append((t, e.value, f"{fn.__name__}: {ast.unparse(node)[:80]}"))
            if isinstance(node, ast.Return) and node.value is not None:
                v = node.value
                if isinstance(v, ast.Tuple):
                    continue  # read above
                ts = _templates(v)
                if ts is not None:
                    found += [(t, None, f"{fn.__name__}: {ast.unparse(v)[:80]}") for t in ts if t != HOLE]
                elif isinstance(v, ast.Constant) or (isinstance(v, ast.Call) and getattr(v.func, "id", "") in ("NotJudged", "fact")):
                    continue
                elif isinstance(v, ast.IfExp) and all(isinstance(x, ast.Constant) for x in (v.body, v.orelse)):
                    continue
                elif ast.unparse(v) not in NOT_MESSAGES:
                    odd.append(f"{fn.__name__}: return {ast.unparse(v)}")
    return found, odd


@pytest.mark.parametrize("inv_id", sorted(REGISTRY))
def test_every_message_holds_exactly_one_phrase_of_its_invariant(inv_id):
    assert inv_id in SIGNATURES, f"{inv_id} declares no signatures in invariants/signatures.py"
    phrases = signatures_of(inv_id)
    found, odd = _messages(inv_id)
    assert not odd, f"{inv_id}: returns that are not message literals (list them in NOT_MESSAGES with a reason): {odd}"
    assert found, f"{inv_id}: no message found"
    used = set()
    for template, explicit, where in found:
        own = [name for name, ph in phrases.items() if _holds(template, ph)]
        # (a second phrase in its fixed text would leave every such message unclassified)
        assert len(own) == 1, f"{inv_id}: {where!r} holds {len(own)} phrases ({own}); it must hold exactly one in its fixed text"
        if explicit is not None:
            assert explicit == own[0], f"{inv_id}: {where!r} is signed {explicit!r} but its phrase is {own[0]!r}'s"
        used.add(own[0])
    stale = set(SIGNATURES[inv_id]) - used
    assert not stale, f"{inv_id}: signatures no message gives (a reworded message?): {sorted(stale)}"


def test_signatures_name_only_known_invariants_and_are_slugs():
    assert set(SIGNATURES) == set(REGISTRY)
    for inv_id, sigs in SIGNATURES.items():
        for name in [*sigs, *COMMON]:
            assert name != UNCLASSIFIED and name.replace("-", "").isalnum() and name == name.lower(), (inv_id, name)
        assert not set(sigs) & set(COMMON)


def test_a_message_is_classified_by_its_phrase_and_never_by_accident():
    assert signature_of("replay.iff", "a replay came later than the rules ask: ...") == "replay-late"
    assert signature_of("attack.count", "Battle Ox [P1 M1] declared 2 attacks this turn; it may declare one") == "second-attack"
    # an engine's card name can hold any text: a message with two phrases, or none, is unclassified
    assert signature_of("attack.count", "Evil (the engine reports attacks_declared = 1) declared 2 attacks this turn; it may declare one") == UNCLASSIFIED
    assert signature_of("attack.count", "something else entirely") == UNCLASSIFIED
    assert signature_of("attack.count", "could not be evaluated on the engine's data (KeyError: 'x'): ...") == "unreadable-data"
    # a signature an invariant names itself stands
    assert signature_of("replay.iff", Signed("no replay came before ...", "replay-missing")) == "replay-missing"


def test_a_signed_message_survives_pickling():
    import pickle

    s = pickle.loads(pickle.dumps(Signed("msg", "replay-late")))
    assert s == "msg" and s.key == "replay-late"
