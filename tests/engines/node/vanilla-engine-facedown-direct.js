#!/usr/bin/env node
// A copy of engines/examples/node/vanilla-engine.js with ONE PLANTED BUG, for the tests of
// `bpcheck fuzz` on an engine in another language (tests/test_fuzz_engines.py): in
// attackOptions, a monster may attack directly while the opponent controls only face-down
// monsters (the rules allow a direct attack only when the opponent controls no monster: ATK-DIRECT,
// docs/rules.md). `attack.direct-legal` catches it. Everything else is the original, line for
// line (the test checks that the two files differ only in this header and the planted lines).
'use strict';

const fs = require('fs');
const { StringDecoder } = require('string_decoder');

const PROTOCOL = 1;
const ENGINE = 'vanilla-engine (node), planted bug: face-down monsters do not block direct attacks';
const PN = ['P1', 'P2'];
const PILES = ['hand', 'graveyard', 'banished', 'deck'];

class RequestError extends Error {}

// ------------------------------------------------------------------------------------------
// Board -> state
// ------------------------------------------------------------------------------------------

let CARDS = null; // card name -> card record (the `cards` of `start`)

function card(name) {
  return CARDS[name];
}

function vanilla(c) {
  if (!c) return false;
  const plain = (c.effects || []).length === 0 && (c.statics || []).length === 0;
  return plain && ((c.kind === 'monster' && c.subtype === 'normal') || c.kind === 'token');
}

function byCardThenUid(a, b) {
  if (a.card < b.card) return -1;
  if (a.card > b.card) return 1;
  return a.uid - b.uid;
}

function stateFromBoard(board, cards) {
  CARDS = cards;
  if ((board.step || 'main1') !== 'main1') throw new RequestError(`unsupported starting step ${JSON.stringify(board.step)}`);
  let uid = 0;
  const players = [];
  const need = (name, where) => {
    const c = cards[name];
    if (!c) throw new RequestError(`${where}: card ${JSON.stringify(name)} is not in the cards sent`);
    if (!vanilla(c)) {
      throw new RequestError(`${where}: ${JSON.stringify(name)} is not a vanilla monster; this engine plays Normal Monsters and Tokens without effects only`);
    }
    return c;
  };
  ['p1', 'p2'].forEach((key, side) => {
    const pd = board[key] || {};
    const monsters = [null, null, null, null, null];
    (pd.monsters || []).forEach((m, j) => {
      need(m.card, `${key}.monsters[${j}]`);
      uid += 1;
      monsters[m.zone - 1] = {
        uid,
        card: m.card,
        owner: (m.owner || side + 1) - 1,
        pos: m.position,
        summonedThisTurn: !!m.summoned_this_turn,
        setThisTurn: !!m.set_this_turn,
        positionChanged: false,
        attacksDeclared: 0,
        declaredAt: [],
        declaredDirect: false,
        cannotAttack: false,
        destroyedByBattle: false,
        flippedByBattle: false,
      };
    });
    if ((pd.spells || []).length) throw new RequestError(`${key}.spells: this engine plays no Spell or Trap Cards`);
    if (pd.field_spell) throw new RequestError(`${key}.field_spell: this engine plays no Spell or Trap Cards`);
    const p = { lp: pd.lp, monsters };
    for (const pile of PILES) {
      const refs = [];
      (pd[pile] || []).forEach((entry, j) => {
        const name = typeof entry === 'string' ? entry : entry.card;
        need(name, `${key}.${pile}[${j}]`);
        uid += 1;
        const owner = (typeof entry === 'string' ? side + 1 : entry.owner || side + 1) - 1;
        refs.push({ uid, card: name, owner });
      });
      p[pile] = refs.sort(byCardThenUid);
    }
    players.push(p);
  });
  const tp = board.turn_player - 1;
  return {
    turn: board.turn,
    turnPlayer: tp,
    step: 'main1',
    priority: tp,
    passes: 0,
    attack: null,
    fresh: [],
    chainCount: 0,
    over: false,
    winner: null,
    nextUid: 1000,
    players,
  };
}

// ------------------------------------------------------------------------------------------
// Queries
// ------------------------------------------------------------------------------------------

function isTerminal(s) {
  return s.over || s.step === 'end_phase';
}

function toAct(s) {
  return isTerminal(s) ? null : s.priority;
}

function* monstersOf(s) {
  for (let side = 0; side < 2; side++) {
    const ms = s.players[side].monsters;
    for (let i = 0; i < 5; i++) if (ms[i] !== null) yield [side, i, ms[i]];
  }
}

function findMonster(s, uid) {
  for (const f of monstersOf(s)) if (f[2].uid === uid) return f;
  return null;
}

function nameOf(s, uid) {
  for (const f of monstersOf(s)) if (f[2].uid === uid) return f[2].card;
  for (const p of s.players) for (const pile of PILES) for (const r of p[pile]) if (r.uid === uid) return r.card;
  return `#${uid}`;
}

// A field monster's name, with its zone when the name is not unique among all cards.
function ref(s, uid) {
  const f = findMonster(s, uid);
  const name = f[2].card;
  let same = 0;
  for (const g of monstersOf(s)) if (g[2].card === name) same += 1;
  for (const p of s.players) for (const pile of PILES) for (const r of p[pile]) if (r.card === name) same += 1;
  return same <= 1 ? name : `${name} [${PN[f[0]]} M${f[1] + 1}]`;
}

function atkOf(m) {
  return Math.max(card(m.card).atk || 0, 0);
}

function defOf(m) {
  return Math.max(card(m.card).def || 0, 0);
}

// Monsters of `defender` that can be attacked, in zone order.
function attackable(s, defender) {
  const out = [];
  for (const m of s.players[defender].monsters) if (m !== null && !m.destroyedByBattle) out.push(m.uid);
  return out;
}

function attackOptions(s, m) {
  if (m.pos !== 'attack' || m.cannotAttack || m.destroyedByBattle) return [];
  if (m.attacksDeclared >= 1) return [];
  const targets = attackable(s, 1 - s.turnPlayer);
  // PLANTED BUG (tests/test_fuzz_engines.py): face-down monsters are taken not to block a direct
  // attack, so one facing only face-down Defense Position monsters may also attack directly.
  // The rules: a direct attack is legal only when the opponent controls no monsters at all.
  const faceUp = targets.filter((uid) => findMonster(s, uid)[2].pos !== 'facedown');
  return faceUp.length ? targets : [...targets, null];
}

// ------------------------------------------------------------------------------------------
// Legal actions
// ------------------------------------------------------------------------------------------

function act(kind, player, label, extra) {
  return Object.assign({ kind, player, label }, extra || {});
}

function legalActions(s) {
  if (isTerminal(s)) return [];
  const p = s.priority;
  const tp = s.turnPlayer;
  const acts = [];
  if (s.step === 'main1') {
    if (p === tp) {
      if (s.turn > 1) acts.push(act('enter_bp', p, 'enter Battle Phase'));
      acts.push(act('skip_bp', p, 'skip Battle Phase'));
    }
    return acts;
  }
  if (s.step === 'main2') {
    if (p === tp) {
      acts.push(act('end_turn', p, 'end turn'));
      for (const m of s.players[tp].monsters) {
        if (m === null || m.pos === 'facedown') continue;
        if (m.attacksDeclared || m.summonedThisTurn || m.setThisTurn || m.positionChanged) continue;
        acts.push(act('change_position', tp, `change position ${ref(s, m.uid)}`, { card_uid: m.uid }));
      }
    }
    return acts;
  }
  // The Battle Phase: an open game state with priority.
  const battleStep = s.step === 'battle_step';
  if (battleStep && s.attack === null && p === tp) acts.push(act('pass', p, 'end Battle Phase'));
  else acts.push(act('pass', p, 'pass'));
  if (battleStep && p === tp && s.attack === null && s.passes === 0) {
    for (const m of s.players[tp].monsters) {
      if (m === null) continue;
      for (const t of attackOptions(s, m)) {
        const label = `attack ${ref(s, m.uid)} -> ${t === null ? 'direct' : ref(s, t)}`;
        acts.push(act('attack', tp, label, t === null ? { card_uid: m.uid } : { card_uid: m.uid, target: t }));
      }
    }
  }
  return acts;
}

// ------------------------------------------------------------------------------------------
// Transitions
// ------------------------------------------------------------------------------------------

function changeStep(s, ev, to) {
  const from = s.step;
  s.step = to;
  s.priority = s.turnPlayer;
  s.passes = 0;
  s.fresh = [];
  s.chainCount = 0;
  ev.push({ kind: 'phase_changed', from, to });
}

function declareAttack(s, ev, a) {
  const tp = s.turnPlayer;
  const [, , m] = findMonster(s, a.card_uid);
  const target = a.target === undefined ? null : a.target;
  const potential = attackable(s, 1 - tp);
  m.attacksDeclared += 1;
  if (target !== null && !m.declaredAt.includes(target)) m.declaredAt = [...m.declaredAt, target].sort((x, y) => x - y);
  m.declaredDirect = m.declaredDirect || target === null;
  const tf = target === null ? null : findMonster(s, target);
  s.attack = {
    attacker: m.uid,
    target,
    potentialTargets: [...potential].sort((x, y) => x - y),
    directWasLegal: potential.length === 0,
    replayPending: false,
    battleEnded: false,
    targetWasFacedown: tf !== null && tf[2].pos === 'facedown',
    calculated: false,
  };
  s.fresh = [['attack_declared', m.uid]];
  s.passes = 0;
  s.priority = tp;
  s.chainCount = 0;
  ev.push({
    kind: 'attack_declared',
    attacker: m.card,
    attacker_uid: m.uid,
    target: target === null ? null : nameOf(s, target),
    target_uid: target,
    player: tp,
  });
}

function pass(s, ev, p) {
  ev.push({ kind: 'passed', player: p });
  if (s.passes + 1 < 2) {
    s.passes += 1;
    s.priority = 1 - p;
    return;
  }
  advance(s, ev); // two passes in succession (no chain is ever built here)
}

function advance(s, ev) {
  const a = s.attack;
  switch (s.step) {
    case 'battle_start_step':
      changeStep(s, ev, 'battle_step');
      break;
    case 'battle_step':
      if (a === null) changeStep(s, ev, 'battle_end_step');
      else if (s.fresh.some((f) => f[0] === 'attack_declared')) {
        s.fresh = []; // the attack-declaration window closes; the Battle Step goes on
        s.passes = 0;
        s.priority = s.turnPlayer;
      } else {
        const tf = a.target === null ? null : findMonster(s, a.target);
        a.targetWasFacedown = tf !== null && tf[2].pos === 'facedown';
        changeStep(s, ev, 'damage_step_start');
      }
      break;
    case 'damage_step_start':
      if (a !== null && a.targetWasFacedown && !a.battleEnded) {
        changeStep(s, ev, 'damage_step_flip');
        flipTarget(s, ev);
      } else changeStep(s, ev, 'damage_step_before_calculation');
      break;
    case 'damage_step_flip':
      changeStep(s, ev, 'damage_step_before_calculation');
      break;
    case 'damage_step_before_calculation':
      changeStep(s, ev, 'damage_step_during_calculation');
      break;
    case 'damage_step_during_calculation':
      damageCalculation(s, ev);
      if (!s.over) changeStep(s, ev, 'damage_step_after_calculation_1');
      break;
    case 'damage_step_after_calculation_1':
      changeStep(s, ev, 'damage_step_after_calculation_2');
      break;
    case 'damage_step_after_calculation_2':
      changeStep(s, ev, 'damage_step_end');
      sendBattleDestroyed(s, ev);
      break;
    case 'damage_step_end':
      leaveDamageStep(s, ev);
      break;
    case 'battle_end_step':
      changeStep(s, ev, 'main2');
      break;
    default:
      throw new Error(`no advance from ${s.step}`);
  }
}

function flipTarget(s, ev) {
  const f = findMonster(s, s.attack.target);
  if (f === null) return;
  const m = f[2];
  m.pos = 'defense';
  m.flippedByBattle = true;
  ev.push({ kind: 'flipped', card: m.card, card_uid: m.uid, by: 'battle', face_up: true });
}

function battleEndedEarly(s, ev) {
  const a = s.attack;
  if (a === null || a.battleEnded) return true;
  const fa = findMonster(s, a.attacker);
  let bad = fa === null || fa[0] !== s.turnPlayer;
  if (a.target !== null) {
    const ft = findMonster(s, a.target);
    bad = bad || ft === null || ft[0] === s.turnPlayer;
  }
  if (bad) {
    a.battleEnded = true;
    ev.push({ kind: 'battle_ended_early', attacker_uid: a.attacker, reason: 'battler_left_field' });
  }
  return bad;
}

function battleResult(tp, attacker, atkA, target, pos, value) {
  const opp = 1 - tp;
  if (target === null) return [[], [[opp, atkA]]];
  if (pos === 'attack') {
    if (atkA > value) return [[target], [[opp, atkA - value]]];
    if (atkA < value) return [[attacker], [[tp, value - atkA]]];
    return [atkA > 0 ? [attacker, target] : [], []];
  }
  if (atkA > value) return [[target], []];
  if (atkA < value) return [[], [[tp, value - atkA]]];
  return [[], []];
}

function damageCalculation(s, ev) {
  if (battleEndedEarly(s, ev)) return;
  const a = s.attack;
  const tp = s.turnPlayer;
  const atkA = atkOf(findMonster(s, a.attacker)[2]);
  let result;
  if (a.target === null) {
    ev.push({ kind: 'damage_calculation', attacker_uid: a.attacker, target_uid: null, attacker_atk: atkA, target_value: null, target_position: null });
    result = battleResult(tp, a.attacker, atkA, null, null, null);
  } else {
    const t = findMonster(s, a.target)[2];
    const value = t.pos === 'attack' ? atkOf(t) : defOf(t);
    ev.push({ kind: 'damage_calculation', attacker_uid: a.attacker, target_uid: t.uid, attacker_atk: atkA, target_value: value, target_position: t.pos });
    result = battleResult(tp, a.attacker, atkA, t.uid, t.pos, value);
  }
  const [destroy, damage] = result;
  for (const [player, amount] of damage) {
    if (amount <= 0) continue;
    const pl = s.players[player];
    pl.lp = Math.max(0, pl.lp - amount);
    ev.push({ kind: 'battle_damage', player, amount, attacker_uid: a.attacker, target_uid: a.target });
  }
  for (const uid of destroy) {
    const f = findMonster(s, uid);
    if (f === null) continue;
    f[2].destroyedByBattle = true;
    ev.push({ kind: 'destroyed_by_battle', card: f[2].card, card_uid: uid, controller: f[0] });
  }
  a.calculated = true;
  checkLp(s, ev);
}

function checkLp(s, ev) {
  if (s.over) return;
  const zero = [0, 1].filter((p) => s.players[p].lp <= 0);
  if (!zero.length) return;
  s.over = true;
  s.winner = zero.length === 2 ? null : 1 - zero[0];
  ev.push({ kind: 'duel_over', winner: s.winner, reason: 'lp_zero' });
}

function sendBattleDestroyed(s, ev) {
  const marked = [...monstersOf(s)].filter((f) => f[2].destroyedByBattle);
  for (const [side, i, m] of marked) {
    s.players[side].monsters[i] = null;
    const base = { kind: 'card_moved', card: m.card, card_uid: m.uid, owner: m.owner, from: 'monster_zone' };
    if (card(m.card).kind === 'token') {
      ev.push(Object.assign(base, { to: 'nowhere', reason: 'battle' }));
      continue;
    }
    const gy = s.players[m.owner].graveyard; // its owner's Graveyard
    s.players[m.owner].graveyard = [...gy, { uid: m.uid, card: m.card, owner: m.owner }].sort(byCardThenUid);
    ev.push(Object.assign(base, { to: 'graveyard', reason: 'battle' }));
    s.fresh.push(['sent_to_gy_by_battle', m.uid, m.owner]);
  }
}

function leaveDamageStep(s, ev) {
  const a = s.attack;
  s.attack = null;
  for (const [, , m] of monstersOf(s)) m.flippedByBattle = false;
  if (a !== null) ev.push({ kind: 'attack_ended', attacker_uid: a.attacker, reason: 'damage_step_over' });
  changeStep(s, ev, 'battle_step');
}

function changePosition(s, ev, a) {
  const [, , m] = findMonster(s, a.card_uid);
  const from = m.pos;
  m.pos = from === 'attack' ? 'defense' : 'attack';
  m.positionChanged = true; // once a turn (MP2-POSITION); the monster was not Set
  ev.push({ kind: 'position_changed', card: m.card, card_uid: m.uid, from, to: m.pos, by: 'manual' });
}

function applyAction(s0, label) {
  const a = legalActions(s0).find((x) => x.label === label);
  if (a === undefined) throw new RequestError(`${JSON.stringify(label)} is not a legal action here`);
  const s = structuredClone(s0);
  const ev = [];
  switch (a.kind) {
    case 'enter_bp':
      changeStep(s, ev, 'battle_start_step');
      break;
    case 'skip_bp':
    case 'end_turn':
      changeStep(s, ev, 'end_phase');
      break;
    case 'pass':
      pass(s, ev, a.player);
      break;
    case 'attack':
      declareAttack(s, ev, a);
      break;
    case 'change_position':
      changePosition(s, ev, a);
      break;
    default:
      throw new Error(`unknown action kind ${a.kind}`);
  }
  return [s, ev];
}

// ------------------------------------------------------------------------------------------
// Observation (docs/model.md, model/observe.py)
// ------------------------------------------------------------------------------------------

function phaseOf(step) {
  if (step === 'main1' || step === 'main2') return step;
  if (step === 'end_phase') return 'end';
  return 'battle';
}

function observeMonster(side, m) {
  const c = card(m.card);
  return {
    uid: m.uid,
    card: m.card,
    owner: m.owner,
    controller: side,
    token: c.kind === 'token',
    level: c.level,
    attribute: c.attribute,
    race: c.race,
    position: m.pos,
    atk: atkOf(m),
    def: defOf(m),
    base_atk: c.atk,
    base_def: c.def,
    modifiers: [],
    lingering_modifiers: [],
    summoned_this_turn: m.summonedThisTurn,
    attacks_declared: m.attacksDeclared,
    declared_at: m.declaredAt,
    declared_direct: m.declaredDirect,
    cannot_attack_this_turn: m.cannotAttack,
    destroyed_by_battle: m.destroyedByBattle,
    flipped_by_battle: m.flippedByBattle,
    set_this_turn: m.setThisTurn,
    position_changed_this_turn: m.positionChanged,
    once_per_turn_used: [],
    equipped_with: [],
  };
}

function observe(s) {
  const a = s.attack;
  return {
    schema: 1,
    turn: s.turn,
    turn_player: s.turnPlayer,
    phase: phaseOf(s.step),
    step: s.step,
    over: s.over,
    winner: s.winner,
    to_act: toAct(s),
    priority: s.priority,
    passes: s.passes,
    players: s.players.map((p, side) => ({
      lp: p.lp,
      monsters: p.monsters.map((m) => (m === null ? null : observeMonster(side, m))),
      spells: [null, null, null, null, null],
      field_zone: null,
      hand: p.hand,
      graveyard: p.graveyard,
      banished: p.banished,
      deck: p.deck,
    })),
    attack:
      a === null
        ? null
        : {
            attacker: a.attacker,
            target: a.target,
            potential_targets: a.potentialTargets,
            direct_was_legal: a.directWasLegal,
            target_was_facedown: a.targetWasFacedown,
            replay_pending: a.replayPending,
            battle_ended: a.battleEnded,
            damage_calculated: a.calculated,
          },
    chain: [],
    open_windows: {
      attack_declaration: s.fresh.some((f) => f[0] === 'attack_declared'),
      summon: s.fresh.some((f) => f[0] === 'summoned'),
      events: s.fresh,
    },
    chains_in_step: s.chainCount,
    next_uid: s.nextUid,
    lingering: [],
    pending_triggers: [],
    choice: null,
  };
}

// ------------------------------------------------------------------------------------------
// The protocol
// ------------------------------------------------------------------------------------------

let started = false;
let hello = false;
let states = []; // handle -> state
let handles = new Map(); // JSON of a state -> its handle

function handleOf(s) {
  const key = JSON.stringify(s);
  let h = handles.get(key);
  if (h === undefined) {
    h = states.length;
    states.push(s);
    handles.set(key, h);
  }
  return h;
}

function stateOf(req) {
  if (!started) throw new RequestError("no board started: send 'start' first");
  const h = req.state;
  if (!Number.isInteger(h) || h < 0 || h >= states.length) throw new RequestError(`unknown state handle ${JSON.stringify(h)}`);
  return states[h];
}

const OPS = {
  hello(req) {
    if (req.protocol !== PROTOCOL) throw new RequestError(`this engine speaks protocol ${PROTOCOL}, not ${JSON.stringify(req.protocol)}`);
    hello = true;
    return { protocol: PROTOCOL, engine: ENGINE };
  },
  start(req) {
    if (typeof req.board !== 'object' || req.board === null) throw new RequestError("'start' needs the board as an object");
    if (typeof req.cards !== 'object' || req.cards === null) throw new RequestError("'start' needs the cards as an object");
    // the ruleset to play (docs/protocol.md, "The ruleset"; missing: the board's own, else tcg)
    const ruleset = req.ruleset ?? req.board.ruleset ?? 'tcg';
    if (ruleset !== 'tcg') throw new RequestError(`this engine plays the TCG rules only, not ${JSON.stringify(ruleset)}`);
    const s = stateFromBoard(req.board, req.cards);
    states = [];
    handles = new Map();
    started = true;
    return { state: handleOf(s) };
  },
  legal_actions(req) {
    return { actions: legalActions(stateOf(req)) };
  },
  apply(req) {
    const s = stateOf(req);
    const label = typeof req.action === 'object' && req.action !== null ? req.action.label : req.action;
    if (typeof label !== 'string') throw new RequestError("'apply' needs 'action': a label or an action record");
    const [s2, events] = applyAction(s, label);
    return { state: handleOf(s2), events };
  },
  observe(req) {
    return { observation: observe(stateOf(req)) };
  },
  terminal(req) {
    return { terminal: isTerminal(stateOf(req)) };
  },
};

function answer(line) {
  let id = null;
  try {
    let req;
    try {
      req = JSON.parse(line);
    } catch (e) {
      throw new RequestError(`malformed JSON: ${e.message}`);
    }
    if (typeof req !== 'object' || req === null || Array.isArray(req)) throw new RequestError('a request is a JSON object');
    id = req.id === undefined ? null : req.id;
    const op = OPS[req.op];
    if (!Object.prototype.hasOwnProperty.call(OPS, req.op)) throw new RequestError(`unknown op ${JSON.stringify(req.op)}`);
    if (req.op !== 'hello' && !hello) throw new RequestError("send 'hello' first");
    return Object.assign({ id }, op(req));
  } catch (e) {
    const msg = e instanceof RequestError ? e.message : `internal error: ${e && e.stack ? e.stack.split('\n')[0] : e}`;
    return { id, error: msg };
  }
}

// Requests are read as they come and answered at once, one line each (fs.writeSync: no
// buffering in the event loop between a request and its reply).
let pending = '';
const decoder = new StringDecoder('utf8'); // a chunk may end inside a character
process.stdin.on('data', (chunk) => {
  pending += decoder.write(chunk);
  let nl;
  while ((nl = pending.indexOf('\n')) >= 0) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    if (line.trim() === '') continue;
    writeAll(JSON.stringify(answer(line)) + '\n');
  }
});
process.stdin.on('end', () => process.exit(0));

function writeAll(text) {
  const buf = Buffer.from(text, 'utf8');
  let off = 0;
  while (off < buf.length) {
    try {
      off += fs.writeSync(1, buf, off);
    } catch (e) {
      if (e.code !== 'EAGAIN') process.exit(0); // the reader is gone
    }
  }
}
