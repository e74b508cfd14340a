// The table: one seat's view, played over a WebSocket. The server decides everything; this page shows
// the state it is sent, offers only the legal actions, and shows each public event as it happens.
// With K.watch it is a spectator's page (/watch/<game id>): the public table, both hands as counts,
// nothing to act on (watch.js says who is to move and how it ended); chat.js is the chat beside it.
"use strict";

const params = new URLSearchParams(window.location.search);
const SPEED = params.has("speed") ? Math.max(0, Number(params.get("speed")) || 0) : 1;
const MOVE_MS = 320;       // one card's flight; steps are sequenced so a person can follow a turn
const PAUSE_MS = 180;      // the rest between two steps of a turn
const SAKE_CUP = 32;

let state = null;          // the view on the screen: the server's latest, or a step on the way to it
let truth = null;          // the server's latest state that the screen has caught up with
let latestSeq = -1;        // the newest state the server has sent (it may still be waiting in the queue)
let backlog = 0;           // states received and not yet shown
let pending = null;        // the move sent and not yet answered: { seq, action }
let unavailableTries = 0;  // sendings of the pending move the server could not store yet
let laterTimer = null;  // ... and the timer that sends it again
let ws = null;
let retry = 0;
let retryAfter = 0;  // seconds: the server turned the socket away, and said when to come back
let selected = null;       // a hand card waiting for the choice of table card
let queue = Promise.resolve();
let seenResults = null;    // how many hand results have been shown
let hint = null;           // the last hint, for state.seq
let dialogKind = null;
const openGroups = new Set();  // capture groups a phone player expanded ("0:chaff")

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms * SPEED));
const narrow = window.matchMedia("(max-width: 700px)");
const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");
const touchOnly = window.matchMedia("(hover: none), (pointer: coarse)");

function who(p) {
  if (!state) return "";
  if (p === state.seat && !K.watch) return t("table.you_who");
  const player = state.players[p];
  return player.level ? computerName(player.level, player.name) : player.name;
}

function describeEvent(e) {
  const name = who(e.player);
  if (e.kind === "play" || e.kind === "draw") {
    const took = e.captured.filter((c) => c !== e.card).map(cardName);
    const key = "event." + e.kind + (took.length ? "_took" : "");
    return t(key, { who: name, card: cardName(e.card), took: took.join(", ") });
  }
  return t("event." + e.kind, { who: name });
}

// -- sound: our own, synthesised with the Web Audio API; off until the player turns it on -----------

const SOUND_KEY = "koikoi.sound";
let audio = null;
window.KOIKOI_SOUNDS = [];  // what was played, for the tests and for anyone curious

function soundOn() {
  try { return window.localStorage.getItem(SOUND_KEY) === "on"; } catch (e) { return false; }
}

function setSound(on) {
  try { window.localStorage.setItem(SOUND_KEY, on ? "on" : "off"); } catch (e) { /* private mode: this visit only */ }
  if (on && !audio && window.AudioContext) audio = new AudioContext();
  if (audio && audio.state === "suspended") audio.resume();
  showSoundButton();
}

function showSoundButton() {
  const b = $("sound-button");
  const on = soundOn();
  b.setAttribute("aria-pressed", String(on));
  b.textContent = t(on ? "table.sound_on" : "table.sound_off");
}

// One note: a sine or triangle with a quick attack and an exponential fade.
function note(freq, at, length, type = "sine", level = 0.18) {
  const osc = audio.createOscillator(), gain = audio.createGain();
  osc.type = type;
  osc.frequency.setValueAtTime(freq, at);
  gain.gain.setValueAtTime(0.0001, at);
  gain.gain.exponentialRampToValueAtTime(level, at + 0.008);
  gain.gain.exponentialRampToValueAtTime(0.0001, at + length);
  osc.connect(gain).connect(audio.destination);
  osc.start(at);
  osc.stop(at + length + 0.02);
}

// A card laid on the felt: a short low knock with a falling pitch.
function knock(at, freq = 190) {
  const osc = audio.createOscillator(), gain = audio.createGain();
  osc.type = "triangle";
  osc.frequency.setValueAtTime(freq * 1.6, at);
  osc.frequency.exponentialRampToValueAtTime(freq, at + 0.05);
  gain.gain.setValueAtTime(0.0001, at);
  gain.gain.exponentialRampToValueAtTime(0.35, at + 0.004);
  gain.gain.exponentialRampToValueAtTime(0.0001, at + 0.12);
  osc.connect(gain).connect(audio.destination);
  osc.start(at);
  osc.stop(at + 0.15);
}

const SOUNDS = {
  place: (at) => knock(at),
  capture: (at) => { knock(at, 170); knock(at + 0.07, 240); },
  // A pentatonic run up for a yaku; a wider, brighter call for koi-koi; a falling cadence at the end.
  yaku: (at) => [523.3, 587.3, 659.3, 784.0, 880.0].forEach((f, i) => note(f, at + i * 0.07, 0.35)),
  koikoi: (at) => { [392.0, 523.3, 659.3].forEach((f) => note(f, at, 0.5, "triangle", 0.12)); note(1046.5, at + 0.12, 0.45); },
  end: (at) => [784.0, 659.3, 523.3, 392.0].forEach((f, i) => note(f, at + i * 0.12, 0.5, "triangle", 0.14)),
};

function sound(kind) {
  if (!soundOn()) return;
  window.KOIKOI_SOUNDS.push(kind);
  if (!audio || audio.state !== "running") return;  // browsers allow sound only after a click or a key
  SOUNDS[kind](audio.currentTime + 0.01);
}

// Sound turned on at an earlier visit starts with the player's first click or key on this one.
function wakeSound() {
  if (!soundOn() || !window.AudioContext) return;
  if (!audio) audio = new AudioContext();
  if (audio.state === "suspended") audio.resume();
}

// -- the socket ---------------------------------------------------------------------------------------

// One message from the server (over the socket, or from the page's LOCAL way of playing).
function receive(msg) {
  if (msg.type === "reset") {  // a LOCAL page's new position (the next puzzle): nothing of the last carries over
    // In turn with the states: after the last one's steps are shown, before the new one's.
    latestSeq = -1;
    queue = queue.then(() => {
      truth = state = pending = hint = null;
      selected = null;
      seenResults = null;
      closeDialog();
    });
    return;
  }
  if (typeof KoiChat !== "undefined" && KoiChat.take(msg)) return;  // the chat and the spectators' count
  if (msg.type === "error" && typeof msg.retry_after === "number") retryAfter = Math.min(msg.retry_after, 60);
  if (msg.type === "error" && msg.code === "unavailable" && pending) { storeLater(pending); return; }
  if (msg.type === "available") {  // the database answers again: the refused move goes now
    if (pending && unavailableTries) { clearTimeout(laterTimer); sendAgain(pending); }
    return;
  }
  if (unavailableTries) { unavailableTries = 0; document.body.classList.remove("unavailable"); }
  if (msg.type === "state") { retry = 0; clockSeen(msg.state); enqueue(msg.state); tournamentState(msg.state); }
  else if (msg.type === "rematch") { if (msg.token) window.location.href = `/play/${msg.token}`; }
  else if (msg.type === "error") {
    // A refused move: the lock goes and the server's table (sent with the error) is shown again.
    if (pending) { pending = null; document.body.classList.remove("waiting-server"); }
    toast(errorText(msg.code, msg.message));
    if (msg.state) enqueue(msg.state);
    else if (truth && backlog === 0) { state = truth; render(); }
    if (msg.code === "bad_token" && ws) ws.close();
  } else if (msg.type === "hint") showHint(msg);
}

// A page that plays on this table without a game on the server (a puzzle, a lesson) brings its own way to
// send a move and hear back (window.KoiLocal: start(receive), send(msg, receive)): no socket then.
const LOCAL = typeof window.KoiLocal === "object" ? window.KoiLocal : null;

function connect() {
  if (LOCAL) { LOCAL.start(receive); return; }
  const proto = window.location.protocol === "https:" ? "wss" : "ws";
  const game = encodeURIComponent(K.game_id);
  const path = K.watch ? `/ws/watch/${game}?game=${game}` : `/ws/${K.token}?game=${game}&chat=1`;
  ws = new WebSocket(`${proto}://${window.location.host}${path}`);
  // The backoff starts again with a table, not with the handshake: a socket the server turns away opens first.
  ws.onopen = () => { document.body.classList.remove("offline"); if (state) render(); };
  ws.onmessage = (ev) => {
    let msg;
    try { msg = JSON.parse(ev.data); } catch (e) { return; }
    receive(msg);
  };
  ws.onclose = () => {
    document.body.classList.add("offline");
    if (pending) { pending = null; document.body.classList.remove("waiting-server"); }
    // Nothing can be played until the socket is back: no card lifts or looks playable meanwhile.
    if (state) render(); else setStatus(t("status.reconnecting"));
    retry = Math.min(retry + 1, 6);
    // Each page its own share of the wait (0.5 to 1.5 times it): after a restart every player of the
    // server reconnects at once, and pages that all came back on the same beat would stay a crowd.
    const wait = Math.max(250 * 2 ** retry, retryAfter * 1000) * (0.5 + Math.random());
    retryAfter = 0;
    setTimeout(connect, wait);
  };
}

// The server's database did not answer for a move: the page says so, keeps the move shown as sent, and
// sends it again (the same move, for the same state) until the server answers otherwise. If the first
// try was stored after all, the new table arrives by itself and the second try is answered "stale".
function storeLater(move) {
  document.body.classList.add("unavailable");
  setStatus(t("status.unavailable"));
  unavailableTries = Math.min(unavailableTries + 1, 2);  // after half a second, then every second
  clearTimeout(laterTimer);
  laterTimer = setTimeout(() => sendAgain(move), 500 * unavailableTries);
}

// The server says "available" as soon as its database answers again: the move goes then rather than
// when the timer fires, up to a second later.
function sendAgain(move) {
  if (pending !== move) return;  // the table moved on meanwhile, or the socket closed
  send({ type: "action", action: move.action, seq: move.seq });
}

function send(msg) {
  if (LOCAL) return LOCAL.send(msg, receive);
  if (!ws || ws.readyState !== WebSocket.OPEN) { toast(t("status.reconnecting")); return false; }
  ws.send(JSON.stringify(msg));
  return true;
}

// The page may act only on the newest state it knows, with nothing on its way to the server and no
// step of the last turn still being shown: a click on anything older would be refused as stale.
function canAct() {
  return !offline() && Boolean(truth && state === truth && !pending && backlog === 0 && truth.seq === latestSeq);
}

// The socket is closed: the page is reconnecting, and every move waits for it.
function offline() { return document.body.classList.contains("offline"); }

function act(action) {
  if (offline()) { toast(t("status.offline_click")); return; }
  if (!canAct() || !state.legal.includes(action)) return;
  if (!send({ type: "action", action, seq: state.seq })) return;
  pending = { seq: state.seq, action };
  selected = null;
  hint = null;
  document.body.classList.add("waiting-server");
  // Your own move shows at once: a played card leaves the hand for the table, nothing stays playable.
  const card = action < PLAY_TAKE_BASE ? action : action < DRAW_TAKE_BASE ? Math.floor((action - PLAY_TAKE_BASE) / 4) : null;
  const next = waitingView(truth);
  if (card !== null) placeOnTable(next, card, truth.seat);
  if (action === KOIKOI) sound("koikoi");
  else if (card !== null) sound("place");
  showStep(next, SPEED === 0 ? null : {});
}

// A copy of a view in which nobody can act: a step on the way to the next state.
function waitingView(v) {
  return Object.assign({}, v, {
    to_move: false, legal: [], hand: v.hand.slice(), table: v.table.slice(), events: v.events.slice(),
    piles: v.piles.map((p) => Object.fromEntries(KIND_KEYS.map((k) => [k, p[k].slice()]))), step: true,
  });
}

// A card laid on the table beside the cards of its month (where a capture takes place).
function placeOnTable(v, card, p) {
  if (v.hand_counts && p >= 0) {  // a spectator: both hands are counts
    v.hand_counts = v.hand_counts.slice();
    v.hand_counts[p] = Math.max(0, v.hand_counts[p] - 1);
  } else if (p === v.seat) v.hand = v.hand.filter((c) => c !== card);
  else v.opponent_hand_count = Math.max(0, v.opponent_hand_count - 1);
  if (v.table.includes(card)) return;
  const last = v.table.map(monthOf).lastIndexOf(monthOf(card));
  if (last >= 0) v.table.splice(last + 1, 0, card);
  else v.table.push(card);
}

function toPile(v, cards, p) {
  v.table = v.table.filter((c) => !cards.includes(c));
  const pile = v.piles[p];
  for (const c of cards) {
    const k = PILE_GROUP[kindOf(c)];
    if (!pile[k].includes(c)) pile[k] = pile[k].concat([c]).sort((a, b) => a - b);
  }
}

// The page's card kinds ("bright", from the engine's names) and the groups of a pile ("brights").
const PILE_GROUP = { bright: "brights", animal: "animals", ribbon: "ribbons", chaff: "chaff" };

// -- showing a new state ------------------------------------------------------------------------------

function enqueue(next) {
  latestSeq = Math.max(latestSeq, next.seq);
  backlog += 1;
  queue = queue.then(() => show(next)).catch((e) => console.error(e)).finally(() => {
    backlog -= 1;
    if (backlog === 0 && state === truth) render();  // the last step done: the table takes input again
  });
}

function newEvents(prev, next) {
  if (!prev) return [];
  if (next.hand_number === prev.hand_number) return next.events.slice(prev.events.length);
  if (next.hand_number === prev.hand_number + 1) {
    return next.previous_hand_events.slice(prev.events.length).concat(next.events);
  }
  return [];
}

async function show(next) {
  if (truth && next.seq < truth.seq) return; // an old message overtaken by a newer one
  if (pending && next.seq > pending.seq) { pending = null; document.body.classList.remove("waiting-server"); }
  const events = newEvents(truth, next);
  if (seenResults === null) seenResults = next.results.length;
  const fresh = next.results.length > seenResults ? next.results.slice(seenResults) : [];
  // The events of the table the player last saw (after the end of a hand, the new deal is shown as it is).
  const sameHand = truth && next.hand_number === truth.hand_number;
  const carried = !truth ? 0 : sameHand ? events.length : Math.max(0, next.previous_hand_events.length - truth.events.length);
  let ended = null;  // the last hand's table as it ended, when a hand has just ended
  if (truth && SPEED > 0) {
    // Each card's way, one step at a time, from the table the player last saw to the new one.
    let v = waitingView(truth);
    for (const e of events.slice(0, carried)) v = await playEvent(v, e, next);
    ended = v;
  } else {
    for (const e of events) if (e.kind === "koikoi" && (K.watch || e.player !== next.seat)) { toast(describeEvent(e)); sound("koikoi"); }
    if (truth && fresh.length) ended = events.slice(0, carried).reduce(settleEvent, waitingView(truth));
  }
  const before = truth;
  truth = next;
  state = next;
  document.body.dataset.seq = next.seq;  // taken, even while the last hand's table stays for its summary
  if (fresh.length) {
    seenResults = next.results.length;
    // Under the hand's result its table stays as it ended, already settled: the new scores, nobody to
    // move, the hand's last events in the log, only the winner's yaku (a koi-koi's stakes are spent).
    const last = fresh[fresh.length - 1];
    // (After a lost connection several hands may have ended: then the new deal stays under the last result.)
    const table = ended && fresh.length === 1 && (sameHand || next.hand_number === before.hand_number + 1) ? ended : next;
    state = settledView(table, next, last, next.results.length);
    render();
  } else render();
  yakuSounds(before, next);
  if (fresh.length && !(LOCAL && LOCAL.quiet)) {  // a puzzle's page says the end in its own panel
    sound("end");
    for (let i = 0; i < fresh.length; i++) {
      const number = next.results.length - fresh.length + i + 1;
      await handSummary(fresh[i], number, next.match_over && i === fresh.length - 1);
    }
    state = truth;
    render();
  }
  if (state.match_over && !(LOCAL && LOCAL.quiet)) matchSummary();
  else if (state.to_move && state.phase === "decision" && backlog <= 1) decisionDialog();
}

function yakuSounds(before, next) {
  if (!before || before.hand_number !== next.hand_number) return;
  const grew = [0, 1].some((p) => next.yaku_scores[p] > before.yaku_scores[p] || next.yaku[p].length > before.yaku[p].length);
  if (grew) sound("yaku");
}

// One public event, shown in steps: a played card goes to the table, then what it took to the pile;
// a drawn card turns over from the stock, then goes to the table or, with what it took, to the pile.
async function playEvent(v, e, next) {
  const logged = () => { v.events = v.events.concat([e]); };
  if (e.kind === "koikoi") {
    if (K.watch || e.player !== next.seat) { toast(describeEvent(e)); sound("koikoi"); }
    logged();
    return v;
  }
  if (e.kind !== "play" && e.kind !== "draw") { logged(); return v; }
  const p = e.player;
  const taken = e.captured.filter((c) => c !== e.card);
  if (e.kind === "play") {
    v = waitingView(v);
    placeOnTable(v, e.card, p);
    v.taken = taken;
    logged();
    const from = K.watch ? `#side-${p === v.seat ? 0 : 1} .hand-count` : p === v.seat ? null : "#side-1 .hand-count";
    if (await showStep(v, { from })) sound("place");
  } else {
    if (v.drawn_card !== e.card) {
      v = waitingView(v);
      v.stock_count = Math.max(0, v.stock_count - 1);
      v.drawn_card = e.card;
      v.reveal = { who: who(p), text: describeEvent(e) };
      v.taken = taken;
      logged();
      await showStep(v, { from: "#stock", turn: true });
      sound("place");
    } else logged();
  }
  if (!e.captured.length && e.kind === "play") return v;
  v = waitingView(v);
  v.drawn_card = null;
  v.reveal = null;
  v.taken = [];
  if (e.captured.length) toPile(v, e.captured, p);
  else placeOnTable(v, e.card, -1);
  await showStep(v, {});
  sound(e.captured.length ? "capture" : "place");
  return v;
}

// One public event at once, with nothing shown on the way (as playEvent ends it, without the steps).
function settleEvent(v, e) {
  v = waitingView(v);
  v.events = v.events.concat([e]);
  if (e.kind !== "play" && e.kind !== "draw") return v;
  if (e.kind === "play") placeOnTable(v, e.card, e.player);
  else v.stock_count = Math.max(0, v.stock_count - 1);
  v.drawn_card = null;
  if (e.captured.length) toPile(v, e.captured, e.player);
  else if (e.kind === "draw") placeOnTable(v, e.card, -1);
  return v;
}

// The table `v` of a hand that has ended, as it stays under the hand's result `r`: the scores after
// it, nobody to move or to play, no koi-koi standing, and only the winner's yaku with what they won.
function settledView(v, next, r, number) {
  const s = waitingView(v);
  const won = (p) => r.winner === p;
  Object.assign(s, {
    // The new state's number: the page has taken it (body.dataset.seq), though it shows the old table.
    seq: next.seq, scores: next.scores.slice(), results: next.results, match_over: next.match_over,
    koikoi_calls: [0, 0], multipliers: [1, 1], drawn_card: null, reveal: null, taken: [],
    yaku: [0, 1].map((p) => (won(p) ? r.yaku.map((y) => ({ name: y.name, points: y.points })) : [])),
    yaku_scores: [0, 1].map((p) => (won(p) ? r.base : 0)),
    hand_points: [0, 1].map((p) => (won(p) ? r.points : null)),
    settled: resultHeadline(r, number),
  });
  return s;
}

// -- moving cards (FLIP: where each card was, where it is now, and the way between) ----------------

function cardRects() {
  const m = new Map();
  for (const el of document.querySelectorAll("#table-wrap .card[data-card]")) {
    const r = el.getBoundingClientRect();
    if (r.width) m.set(el.dataset.card, r);
  }
  return m;
}

// Show view `v`; with `motion` (not null), each card that moved flies from where it was. Resolves
// when the cards have landed, with whether anything moved.
async function showStep(v, motion) {
  const before = motion ? cardRects() : null;
  state = v;
  render();
  if (!motion || SPEED === 0) return false;
  const origin = motion.from ? document.querySelector(motion.from) : null;
  const fade = reducedMotion.matches;
  const flights = [];
  for (const el of document.querySelectorAll("#table-wrap .card[data-card]")) {
    const now = el.getBoundingClientRect();
    if (!now.width) continue;
    let was = before.get(el.dataset.card);
    const arriving = !was;
    if (arriving && origin) was = origin.getBoundingClientRect();
    if (!was) continue;
    const dx = was.left - now.left, dy = was.top - now.top, scale = was.width / now.width;
    if (!arriving && Math.abs(dx) < 1 && Math.abs(dy) < 1 && Math.abs(scale - 1) < 0.02) continue;
    let frames;
    if (fade) frames = [{ opacity: 0 }, { opacity: 1 }];
    else {
      const from = `translate(${dx}px, ${dy}px) scale(${scale})` + (arriving && motion.turn ? " rotateY(90deg)" : "");
      frames = [{ transform: from, transformOrigin: "top left" }, { transform: "none", transformOrigin: "top left" }];
    }
    el.classList.add("moving");
    const a = el.animate(frames, { duration: MOVE_MS * SPEED, easing: "cubic-bezier(.2,.7,.3,1)" });
    flights.push(a.finished.catch(() => null).then(() => el.classList.remove("moving")));
  }
  if (!flights.length) return false;
  await Promise.all(flights);
  await sleep(PAUSE_MS);
  return true;
}

function setStatus(text) { $("status").textContent = text; }

// What is happening now, in one line: whose turn and what they are doing, or how the hand or match ended.
function statusText() {
  if (offline()) return t("status.reconnecting");
  const local = LOCAL && LOCAL.status ? LOCAL.status(state) : null;  // a puzzle's or a lesson's own words
  if (local) return local;
  if (state.settled) return state.settled;  // a hand has just ended: its result
  if (K.watch) return watchStatus();
  if (unavailableTries) return t("status.unavailable");
  if (state.status === "waiting") return t("status.waiting_friend");
  if (pending) return t("status.sending");
  if (state.match_over) return t("status.match_over");
  const opp = 1 - state.seat, name = who(opp);
  if (state.step) {
    const last = state.events[state.events.length - 1];
    return last && last.player !== state.seat ? t("status.opponent_turn", { name }) : t("status.moving");
  }
  if (!state.to_move) {
    if (state.away && state.away[opp]) return t("status.opponent_away", { name });
    // The phase is public: the other player's drawn card matched two table cards, or they made a yaku.
    if (state.phase === "draw_choice") return t("status.opponent_choosing", { name });
    if (state.phase === "decision") return t("status.opponent_deciding", { name });
    const player = state.players[opp];
    return t(player.level || player.bot ? "status.computer_thinking" : "status.opponent_turn", { name });
  }
  if (state.phase === "draw_choice") return t("status.choose_draw_take", { card: cardName(state.drawn_card) });
  if (state.phase === "decision") return t("status.decide");
  if (selected !== null) return t(touchOnly.matches ? "status.choose_take_touch" : "status.choose_take", { card: cardName(selected) });
  return t("status.your_turn");
}

function playOptions(c) {
  return state.legal.filter((a) => a === c || (a >= PLAY_TAKE_BASE && a < DRAW_TAKE_BASE &&
                                              Math.floor((a - PLAY_TAKE_BASE) / 4) === c));
}

// The table cards the player may pick now, each with the action it means.
function tableChoices() {
  if (!state || !state.to_move || !canAct()) return new Map();
  const out = new Map();
  if (state.phase === "draw_choice") {
    for (const a of state.legal) if (a >= DRAW_TAKE_BASE && a < KOIKOI) out.set(a - DRAW_TAKE_BASE, a);
  } else if (selected !== null) {
    for (const a of playOptions(selected)) {
      if (a >= PLAY_TAKE_BASE) out.set((selected & ~3) | ((a - PLAY_TAKE_BASE) % 4), a);
    }
  }
  return out;
}

function clickHand(c) {
  // Offline, a card does nothing, and the page says why rather than ignoring the click.
  if (offline()) { toast(t("status.offline_click")); return; }
  // A click on a card of a table already left behind (a second quick click) does nothing.
  if (!canAct() || !state.to_move || state.phase !== "play" || !state.hand.includes(c)) return;
  const opts = playOptions(c);
  if (opts.length === 1) act(opts[0]);
  else if (opts.length > 1) { selected = selected === c ? null : c; render(); }
}

// A card's accessible name with what it can do: colour is never the only sign of a match.
function marked(el, c, note) {
  el.appendChild(h("span", { class: "match-mark", "aria-hidden": "true" }, "◆"));
  el.setAttribute("aria-label", cardName(c) + " — " + note);
  return el;
}

// A tournament's match: a link back to the tournament, berserk while the seat may, and, once an arena's
// match is over, back to the tournament's page, where the next pairing is told.
let tournament = null;
let leavingForTournament = false;
async function loadTournament() {
  if (!K.token) return;
  try { tournament = (await api("GET", "/api/play/" + K.token + "/tournament")).tournament; } catch (e) { return; }
  if (!tournament) return;
  const link = $("tournament-link");
  link.href = tournament.url;
  link.textContent = t("tournament.back_to", { name: tournament.name });
  link.hidden = false;
  $("berserk-button").hidden = !tournament.can_berserk;
  if (state) render();
}

async function berserk() {
  try {
    await api("POST", "/api/play/" + K.token + "/berserk");
    $("berserk-button").hidden = true;
    toast(t("tournament.berserked"));
  } catch (e) { toast(errorText(e.code, e.message, e.params)); }
}

function renderTournament() {
  if (!tournament) return;
  if (state.status !== "playing") $("berserk-button").hidden = true;
  tournamentState(state);
}

// As soon as the server says the match is over (the summary may still be on the screen).
function tournamentState(s) {
  if (!tournament) return;
  if (s.status === "finished" && tournament.kind === "arena" && tournament.status === "running" && !leavingForTournament) {
    leavingForTournament = true;
    toast(t("tournament.back_soon"), 5000);
    setTimeout(() => { location.href = tournament.url; }, 5000);
  }
}

function render() {
  const s = state;
  renderTournament();
  const me = s.seat, opp = 1 - s.seat;
  const live = canAct();
  document.body.classList.toggle("my-turn", s.to_move && live);
  document.body.classList.toggle("touch", touchOnly.matches);
  document.body.dataset.seq = s.seq;  // for tests and for anyone reading the page's state
  document.body.dataset.live = live ? "1" : "0";
  for (const [p, side] of [[opp, $("side-1")], [me, $("side-0")]]) renderSide(p, side);
  $("stock-count").textContent = String(s.stock_count);
  $("stock").setAttribute("aria-label", tn("count.stock", s.stock_count, { n: s.stock_count }));
  $("stock").title = tn("count.stock", s.stock_count, { n: s.stock_count });
  const field = $("field");
  const choices = tableChoices();
  const taken = s.taken || [];
  fill(field, ...s.table.map((c) => {
    const pick = choices.get(c);
    const el = cardEl(c, { button: pick !== undefined, cls: pick !== undefined ? "pick" : "" });
    if (pick !== undefined) marked(el, c, t("table.can_take"));
    else if (selected !== null && monthOf(c) === monthOf(selected)) marked(el, c, t("table.same_month")).classList.add("match");
    if (taken.includes(c)) el.classList.add("taken");
    if (pick !== undefined) el.addEventListener("click", () => act(pick));
    return el;
  }));
  const reveal = $("reveal");
  if (s.drawn_card !== null && s.drawn_card !== undefined) {
    const r = s.reveal;
    fill(reveal, h("div", { class: "reveal-who" }, t("table.drawn")), cardEl(s.drawn_card, { cls: "revealed draw" }),
      r ? h("div", { class: "reveal-text" }, r.text) : null);
    reveal.classList.add("on");
    reveal.classList.toggle("choosing", choices.size > 0);
  } else {
    reveal.classList.remove("on", "choosing");
    fill(reveal);
  }
  const hand = $("hand");
  fill(hand, ...s.hand.map((c, i) => {
    const playable = live && s.to_move && s.phase === "play" && playOptions(c).length > 0;
    const el = cardEl(c, { button: true, cls: (playable ? "playable" : "") + (selected === c ? " selected" : "") });
    // Offline the cards stay clickable, for a click to be told why nothing happens; none is playable.
    if (offline()) el.setAttribute("aria-disabled", "true");
    else el.disabled = !playable;
    el.setAttribute("aria-keyshortcuts", String(i + 1));
    el.appendChild(h("span", { class: "key", "aria-hidden": "true" }, String(i + 1)));
    const matches = s.table.filter((x) => monthOf(x) === monthOf(c)).length;
    if (playable && matches) marked(el, c, t("table.has_match")).classList.add("has-match");
    if (hint && hint.seq === s.seq && hint.choices.length && hint.choices[0].action < DRAW_TAKE_BASE) {
      const a = hint.choices[0].action;
      const best = a < PLAY_TAKE_BASE ? a : Math.floor((a - PLAY_TAKE_BASE) / 4);
      if (best === c) el.classList.add("hinted");
    }
    el.addEventListener("click", () => clickHand(c));
    return el;
  }));
  setStatus(statusText());
  // The last moves of this hand in the order they were played, the newest at the bottom.
  const recent = s.events.slice(-5);
  fill($("log"), ...recent.map((e, i) => h("li", { class: i === recent.length - 1 ? "newest" : "" }, describeEvent(e))));
  $("hint-button").hidden = !(s.hints && s.to_move);
  $("declare-button").hidden = !(live && s.legal.includes(DECLARE));
  const month = t("month." + s.month);
  const length = s.hands_in_match ? t("table.hand_of", { n: s.hand_number, total: s.hands_in_match })
    : t("table.hand_n", { n: s.hand_number });
  // The time control, and whether a game between two people is rated (for its players and spectators).
  const control = s.clock ? ` · ${clockName(s.clock.control)}` : "";
  const rated = s.opponent !== "friend" ? "" : ` · ${s.rated ? t("player.rated." + s.rated) : t("player.unrated")}`;
  $("match-info").textContent = `${length} · ${month} · ${t("table.dealer")}: ${who(s.dealer)}${control}${rated}`;
  const box = $("invite-box");
  box.hidden = s.status !== "waiting" || Boolean(K.watch);  // the invitation is the host's, not a spectator's
  if (s.status === "waiting" && s.invite_token) $("invite-link").value = `${location.origin}/invite/${s.invite_token}`;
  if (!(hint && hint.seq === s.seq)) $("hint-box").hidden = true;
  tick();
  const area = $("rematch-area");
  if (area) fill(area, ...rematchButtons());
  layoutFans();
}

// Whether the sake cup is counted among the chaff too (as the kasu progress counts it).
function sakeIsChaff(s) {
  return s.rules && (s.rules.sake_cup === "both" || s.rules.sake_cup === "either");
}

// -- the clock, leaving, claims, rematches ---------------------------------------------------------

// The newest clock the server sent and when it came: the page counts down from there (the server, not the
// page, decides when time is up).
let clock = null, clockAt = 0, claim = null, rematchAsked = false;

function clockSeen(v) {
  clock = v.clock;
  claim = v.claim;
  clockAt = performance.now();
  if (v.rematch && v.rematch.made && !rematchAsked) { rematchAsked = true; send({ type: "rematch" }); }
}

function clockLeft() { return clock && clock.left !== null ? clock.left - (performance.now() - clockAt) / 1000 : null; }

function renderClock(p, el) {
  if (!clock) { el.hidden = true; return; }
  el.hidden = false;
  const running = clock.to_move === p && clock.left !== null;
  // The player who ran out of time (or never made a first move) has none left, whatever their bank held
  // when their last decision began.
  const e = state.ending;
  const out = Boolean(e && ((e.reason === "time" && e.winner === 1 - p) || e.no_show === p));
  const left = out ? 0 : running ? clockLeft() : clock.banks[p];
  el.textContent = running && clock.move_left > 0 && left > clock.banks[p]
    ? `${Math.ceil(left - clock.banks[p])} + ${clockTime(clock.banks[p])}` : clockTime(left);
  el.classList.toggle("running", running);
  el.classList.toggle("low", running && left < 10 && !clock.control.endsWith("d"));
  el.setAttribute("aria-label", t("clock.left", { who: p === state.seat && !K.watch ? t("table.you") : who(p), time: el.textContent }));
}

function renderLeaving() {
  const s = state;
  // Before both have moved the server takes a resignation for an abort (no result): the page says so.
  $("abort-button").hidden = !s.can_abort;
  $("resign-button").hidden = !s.can_resign || s.can_abort;
  const box = $("claim-box");
  box.hidden = !claim;
  if (claim) {
    const wait = Math.max(0, claim.in - (performance.now() - clockAt) / 1000);
    $("claim-text").textContent = wait > 0
      ? t(claim.closed ? "leave.closed_wait" : "leave.away_wait", { name: who(1 - s.seat), n: Math.ceil(wait) })
      : t("leave.can_claim", { name: who(1 - s.seat) });
    $("claim-button").disabled = wait > 0;
  }
}

function tick() {
  if (!state) return;
  for (const [p, side] of [[1 - state.seat, $("side-1")], [state.seat, $("side-0")]]) renderClock(p, side.querySelector(".clock"));
  renderLeaving();
}

function confirmResign() {
  openDialog("confirm",
    h("h2", {}, t("leave.resign_title")),
    h("p", {}, t("leave.resign_text")),
    h("div", { class: "buttons" },
      h("button", { class: "primary", id: "resign-confirm", onclick: () => { closeDialog(); send({ type: "resign" }); } }, t("leave.resign")),
      h("button", { class: "secondary", onclick: closeDialog }, t("leave.cancel"))));
}

// The rematch part of the match's summary: offer, accept or decline, or wait for the other's answer.
function rematchButtons() {
  const r = state.rematch;
  if (!r || state.opponent !== "friend") return [];
  if (r.offered_by === null || r.offered_by === undefined) {
    return [h("button", { class: "primary", id: "offer-rematch", onclick: () => send({ type: "rematch" }) }, t("rematch.offer"))];
  }
  if (r.offered_by === state.seat) return [h("span", { class: "rematch-wait" }, t("rematch.offered"))];
  return [
    h("span", { class: "rematch-wait" }, t("rematch.asks", { name: who(1 - state.seat) })),
    h("button", { class: "primary", id: "accept-rematch", onclick: () => send({ type: "rematch" }) }, t("rematch.accept")),
    h("button", { class: "secondary", id: "decline-rematch", onclick: () => send({ type: "decline_rematch" }) }, t("rematch.decline")),
  ];
}

function renderSide(p, side) {
  const s = state;
  const bar = side.querySelector(".bar");
  const player = s.players[p];
  const label = p === s.seat && !K.watch ? t("table.you") : player.level ? computerName(player.level, player.name) : player.name;
  const level = player.level && CATALOG["computer.level." + player.level];
  fill(bar.querySelector(".who"),
    h("b", {}, label),
    level ? [" ", h("span", { class: "badge level" }, level)] : null,
    player.bot ? botBadge() : null,
    p === s.dealer ? h("span", { class: "badge dealer", title: t("table.dealer") }, t("table.dealer_short")) : null,
    s.current_player === p && !s.match_over && !s.settled ? h("span", { class: "badge turn" }, t("table.to_move")) : null,
    K.watch && s.away && s.away[p] ? h("span", { class: "badge away" }, t("watch.away")) : null,
  );
  bar.querySelector(".score").textContent = t("table.score", { n: s.scores[p] });
  renderClock(p, bar.querySelector(".clock"));
  const calls = s.koikoi_calls[p];
  bar.querySelector(".calls").textContent = calls ? t("table.calls", { n: calls }) : "";
  const count = bar.querySelector(".hand-count");
  if (count) {
    const n = s.hand_counts ? s.hand_counts[p] : s.opponent_hand_count;
    fill(count, h("span", { class: "mini-backs", "aria-hidden": "true" }, ...Array.from({ length: n }, () => h("i"))),
      tn("count.in_hand", n, { n }));
  }
  const caps = side.querySelector(".captures");
  const collapsible = narrow.matches;
  fill(caps, ...KIND_KEYS.map((k) => {
    const cards = s.piles[p][k];
    // The sake cup lies among the animals; where it counts as chaff as well, a shadow of it sits among
    // the chaff, so that the chaff count agrees with the kasu progress.
    const ghost = k === "chaff" && sakeIsChaff(s) && s.piles[p].animals.includes(SAKE_CUP);
    const n = cards.length + (ghost ? 1 : 0);
    const id = `${p}:${k}`;
    const open = !collapsible || openGroups.has(id);
    const labelKids = [t("kind." + k), " ", h("span", { class: "count" }, String(n))];
    const label = collapsible && n
      ? h("button", { type: "button", class: "group-label", "aria-expanded": String(open),
        onclick: () => { if (openGroups.has(id)) openGroups.delete(id); else openGroups.add(id); render(); } }, ...labelKids)
      : h("div", { class: "group-label" }, ...labelKids);
    const shadow = ghost ? h("div", { class: "card small ghost", title: t("table.sake_as_chaff") },
      h("img", { src: `/cards/${SAKE_CUP}.svg`, alt: t("table.sake_as_chaff"), draggable: "false" })) : null;
    return h("div", { class: "group " + k + (open ? "" : " collapsed"), "data-kind": k },
      label,
      h("div", { class: "group-cards" }, ...cards.map((c) => cardEl(c, { small: true })), shadow));
  }));
  const prog = side.querySelector(".progress");
  const made = s.yaku[p];
  const madeNames = new Set(made.map((y) => y.name));
  fill(prog,
    ...made.map((y) => h("span", { class: "chip made", title: t("yaku." + y.name) },
      `${yakuShort(y.name)}: ${tn("count.points", y.points, { n: y.points })}`)),
    // Only what is still to make: a yaku made shows above with its points, and grows there.
    ...s.progress[p].filter((x) => x.have > 0 && x.have < x.need && !madeNames.has(x.yaku)).map((x) =>
      h("span", { class: "chip", title: `${t("yaku." + x.yaku)}: ${t("yakudoc." + x.yaku)}` },
        `${yakuShort(x.yaku)} ${x.have}/${x.need}`)),
    s.settled && s.hand_points[p] !== null ? h("span", { class: "chip won" }, t("table.hand_points", { n: s.hand_points[p] }))
      : made.length ? h("span", { class: "chip total" }, t("table.yaku_total", { n: s.yaku_scores[p],
        mult: s.multipliers[p] > 1 ? " ×" + s.multipliers[p] : "" })) : null,
  );
}

// Captured cards at a readable size: where a group is short of room its cards overlap in a fan, each
// showing at least its left part; a fan that would hide more than that takes another row.
function layoutFans() {
  for (const box of document.querySelectorAll("#table-wrap .group-cards, #dialog .fan")) {
    const cards = [...box.querySelectorAll(":scope > .card, :scope > .fan-row > .card")];
    if (!cards.length || box.closest(".collapsed")) continue;
    const width = box.clientWidth, w = cards[0].offsetWidth;
    if (!width || !w) continue;
    const gap = 3, least = Math.ceil(w * 0.45);
    let perRow = cards.length;
    const step = () => (perRow > 1 ? Math.min(w + gap, (width - w) / (perRow - 1)) : w);
    while (perRow > 1 && step() < least) perRow -= 1;
    const rows = [];
    for (let i = 0; i < cards.length; i += perRow) rows.push(cards.slice(i, i + perRow));
    perRow = Math.max(...rows.map((r) => r.length));
    const shift = Math.floor(step() - w);
    box.replaceChildren(...rows.map((r) => h("div", { class: "fan-row" }, ...r)));
    for (const c of cards) c.style.marginLeft = "";
    for (const r of rows) r.slice(1).forEach((c) => { c.style.marginLeft = shift + "px"; });
  }
}

// -- dialogs ------------------------------------------------------------------------------------------

function openDialog(kind, ...children) {
  const d = $("dialog");
  dialogKind = kind;
  fill($("dialog-body"), ...children);
  if (!d.open) d.showModal();
  layoutFans();
  const first = d.querySelector("button.primary, a.primary");
  if (first) first.focus();
}

function closeDialog() {
  const d = $("dialog");
  dialogKind = null;
  if (d.open) d.close();
}

// Tab and Shift+Tab go round the dialog's own controls and never reach the table behind it.
function trapFocus(ev) {
  const d = $("dialog");
  if (ev.key !== "Tab" || !d.open) return;
  const items = [...d.querySelectorAll("button, a[href], input, select, [tabindex]:not([tabindex='-1'])")]
    .filter((el) => !el.disabled && el.offsetParent !== null);
  if (!items.length) { ev.preventDefault(); return; }
  const first = items[0], last = items[items.length - 1];
  const inside = d.contains(document.activeElement);
  if (ev.shiftKey && (document.activeElement === first || !inside)) { ev.preventDefault(); last.focus(); }
  else if (!ev.shiftKey && (document.activeElement === last || !inside)) { ev.preventDefault(); first.focus(); }
}

// A key's letter after a button's words, for keyboards only: a phone has no keys to press.
function keyHint(k) { return h("span", { class: "key-hint", "aria-hidden": "true" }, ` (${k})`); }

// Each yaku with its points and, where the server says which, the cards that form it.
function yakuList(yaku) {
  return h("ul", { class: "yaku-list" }, ...yaku.map((y) => h("li", { "data-yaku": y.name },
    h("div", { class: "yaku-line" }, h("span", {}, t("yaku." + y.name)), " ",
      h("b", {}, tn("count.points", y.points, { n: y.points }))),
    y.cards && y.cards.length ? h("div", { class: "fan yaku-cards" }, ...y.cards.map((c) => cardEl(c, { small: true }))) : null)));
}

// "7 × 2 = 14 points", and why: each rule that multiplied the yaku total, with its factor.
function stakesText(base, mult, points, reasons) {
  const sum = tn("count.points_mult", points, { base, mult, points });
  if (!reasons || !reasons.length) return sum;
  const why = reasons.map((r) => t("reason." + r.why, { factor: r.factor, n: r.n === undefined ? "" : r.n }));
  return `${sum} (${why.join("; ")})`;
}

function decisionDialog() {
  const st = state.stakes;
  if (!st) return;
  const body = [
    h("h2", {}, t("decision.title")),
    yakuList(st.yaku),
    h("p", { class: "stakes" }, st.multiplier > 1
      ? stakesText(st.base, st.multiplier, st.points, st.reasons)
      : t("decision.points", { points: st.points })),
    h("p", { class: "hint-text" }, st.koikoi_allowed ? t("decision.explain") : t("decision.no_koikoi")),
    h("div", { class: "buttons" },
      h("button", { class: "primary", id: "stop-button", onclick: () => { closeDialog(); act(STOP); } },
        t("decision.stop", { points: st.points }), keyHint("S")),
      st.koikoi_allowed ? h("button", { class: "danger", id: "koikoi-button",
        onclick: () => { closeDialog(); act(KOIKOI); } }, t("decision.koikoi"), keyHint("K")) : null,
      state.hints ? h("button", { class: "secondary", onclick: requestHint }, t("table.hint"), keyHint("H")) : null),
    h("div", { class: "hint-box", id: "decision-hint", hidden: true }),
  ];
  openDialog("decision", ...body);
}

function resultHeadline(r, number) {
  if (r.winner === null || r.winner === undefined) {
    return r.deltas.some((d) => d !== 0) ? t("summary.exhausted_scored", { n: number }) : t("summary.drawn", { n: number });
  }
  return r.winner === state.seat && !K.watch ? t("summary.you_won", { n: number, points: r.points })
    : t("summary.they_won", { n: number, name: who(r.winner), points: r.points });
}

function handSummary(r, number, last) {
  return new Promise((resolve) => {
    const body = [
      h("h2", {}, resultHeadline(r, number)),
      r.reason === "hand_bonus" ? h("p", {}, t("summary.hand_bonus")) : null,
      r.yaku.length ? yakuList(r.yaku) : null,
      r.multiplier > 1 ? h("p", { class: "stakes" }, stakesText(r.base, r.multiplier, r.points, r.reasons)) : null,
      h("p", { class: "scores" }, K.watch ? watchScores(state.scores)
        : t("summary.scores", { you: state.scores[state.seat], them: state.scores[1 - state.seat] })),
      h("div", { class: "buttons" }, h("button", { class: "primary", id: "next-hand", onclick: () => { closeDialog(); resolve(); } },
        last ? t("summary.see_result") : t("summary.next_hand"))),
    ];
    openDialog("summary", ...body);
    $("dialog").addEventListener("close", resolve, { once: true });
  });
}

// What a rated game did to both ratings ("You: 1512 (+12)"), or why it did nothing: under the result.
function ratingLines(rating, name, order) {
  if (!rating) return null;
  if (!rating.counted) return h("p", { class: "rating", id: "rating-change" }, t("match.rating_not_counted"));
  const signed = (d) => (d > 0 ? "+" : d < 0 ? "\u2212" : "\u00b1") + Math.abs(d);
  return h("p", { class: "rating", id: "rating-change" }, ...order.map((p, i) => {
    const r = rating.players[p];
    return [i ? h("br") : null, t("match.rating", { name: name(p), rating: r.after, change: signed(r.after - r.before) })];
  }));
}

// The rating lines of an open result, put in or brought up to date: what a rated game did to the ratings
// is read after the game ended, so it may come in a later state than the one that opened the result.
function showRating() {
  const el = K.watch ? ratingLines(state.rating, watchName, [0, 1])
    : ratingLines(state.rating, (p) => (p === state.seat ? t("table.you") : who(p)), [state.seat, 1 - state.seat]);
  const old = document.getElementById("rating-change");
  if (!el) return;
  if (old) old.replaceWith(el);
  else document.querySelector("dialog[open] .scores")?.after(el);
}

function matchSummary() {
  if (dialogKind === "match") { showRating(); return; }
  if (K.watch) { watchSummary(); return; }
  const o = state.outcome || { winner: state.match_winner, scores: state.scores };
  const e = state.ending;
  const noResult = e && ["abort", "expired", "closed"].includes(e.reason);  // not a draw: nothing was played out
  const headline = noResult ? t("match.no_result")
    : o.winner === null || o.winner === undefined ? t("match.draw")
    : o.winner === state.seat ? t("match.you_won") : t("match.they_won", { name: who(o.winner) });
  const rows = state.results.map((r, i) => h("tr", {},
    h("td", {}, String(i + 1)),
    h("td", {}, r.yaku.map((y) => t("yaku." + y.name)).join(", ") || "—"),
    h("td", {}, (r.deltas[state.seat] > 0 ? "+" : "") + r.deltas[state.seat]),
    h("td", {}, (r.deltas[1 - state.seat] > 0 ? "+" : "") + r.deltas[1 - state.seat])));
  const q = `?token=${encodeURIComponent(K.token)}`;
  // The one the sentence is about: who lost, or who never made a first move (a game aborted by the clock).
  const about = e && e.no_show !== undefined ? e.no_show : e && e.winner !== null ? 1 - e.winner : null;
  const ending = e ? h("p", { class: "ending", id: "ending" },
    t(e.no_show !== undefined ? "ending.no_show" : "ending." + e.reason,
      { name: about === null ? "" : about === state.seat ? t("table.you") : who(about) })) : null;
  openDialog("match",
    h("h2", {}, headline),
    ending,
    h("p", { class: "scores" }, t("summary.scores", { you: o.scores[state.seat], them: o.scores[1 - state.seat] })),
    ratingLines(state.rating, (p) => (p === state.seat ? t("table.you") : who(p)), [state.seat, 1 - state.seat]),
    rows.length ? h("table", { class: "hands-table" },
      h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, t("rules.yaku")), h("th", {}, t("table.you")),
        h("th", {}, who(1 - state.seat)))),
      h("tbody", {}, ...rows)) : null,
    h("div", { class: "buttons", id: "rematch-area" }, ...rematchButtons()),
    h("div", { class: "buttons" },
      state.opponent !== "friend" ? h("button", { class: "primary", id: "rematch", onclick: rematch }, t("match.again")) : null,
      h("a", { class: "button primary", href: `/replay/${K.game_id}${q}`, id: "replay-link" }, t("match.replay")),
      h("a", { class: "button secondary", href: `/api/games/${K.game_id}/record${q}`, id: "download-link",
        download: `koikoi-${K.game_id}.json` }, t("match.download")),
      h("a", { class: "button secondary", href: "/" }, t("match.lobby"))));
}

// Another match against the same computer player, under exactly the same rules.
async function rematch() {
  const rules = Object.assign({}, state.rules);
  const name = String(rules.name || "").replace(/ \(custom\)$/, "");
  delete rules.name;
  try {
    const game = await api("POST", "/api/games", {
      name: state.players[state.seat].name, opponent: state.opponent, rules: { preset: name, options: rules },
    });
    window.location.href = game.url;
  } catch (e) {
    toast(errorText(e.code, e.message));
  }
}

// -- hints --------------------------------------------------------------------------------------------

function requestHint() {
  if (!state || !state.hints || !state.to_move) return;
  const box = state.phase === "decision" ? $("decision-hint") : $("hint-box");
  if (box) { box.hidden = false; box.textContent = t("hint.thinking"); }
  send({ type: "hint", seq: state.seq });
}

function showHint(msg) {
  if (!state || msg.seq !== state.seq) return;
  hint = msg;
  const decision = state.phase === "decision";
  const box = decision ? $("decision-hint") : $("hint-box");
  if (!box) return;
  // Every legal choice, best first, in the units of the table: the points this hand is expected to
  // bring (a stop is exactly what it scores) and, where the search weighs the match, the chance to win it.
  const fmt = (v) => (v >= 0 ? "+" : "") + v.toFixed(1);
  const known = (v) => v !== null && v !== undefined;
  const withWin = msg.choices.some((c) => known(c.win));
  const items = msg.choices.map((c, i) => h("li", { class: i === 0 ? "best" : "", "data-action": String(c.action) },
    h("span", { class: "hint-move" }, describeAction(c.action)),
    c.action < PLAY_TAKE_BASE
      ? h("span", { class: "hint-takes" }, c.captures.length
        ? t("hint.takes", { cards: c.captures.map(cardName).join(", ") }) : t("hint.takes_nothing"))
      : null,
    // Sorted by what is shown first: the chance to win the match (to the tenth of a percent), then the points.
    withWin && known(c.win) ? h("b", { class: "hint-win" }, t("hint.win", { p: (c.win * 100).toFixed(1) })) : null,
    known(c.points) ? (withWin ? h("span", { class: "hint-points" }, t("hint.points", { v: fmt(c.points) }))
      : h("b", { class: "hint-points" }, t("hint.points", { v: fmt(c.points) }))) : null));
  let explain = null;
  if (decision && msg.choices.length > 1) {
    // Said in the units the list is sorted by: the chance to win where it is shown, else the points.
    const byWin = withWin && msg.choices.every((c) => known(c.win));
    const v = Object.fromEntries(msg.choices.map((c) => [c.action, byWin ? (c.win * 100).toFixed(1) : fmt(c.points)]));
    const better = msg.choices[0].action === KOIKOI ? "hint.koikoi_better" : "hint.stop_better";
    explain = h("p", { class: "hint-explain" }, t(byWin ? better + "_win" : better, { stop: v[STOP], koikoi: v[KOIKOI] }));
  }
  fill(box, h("div", { class: "hint-title" }, t(withWin ? "hint.title_match" : "hint.title")), h("ol", {}, ...items), explain);
  box.hidden = false;
  if (!decision) render();
}

// -- keyboard -----------------------------------------------------------------------------------------

document.addEventListener("keydown", (ev) => {
  trapFocus(ev);
  if (!state || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (ev.target && (ev.target.tagName === "INPUT" || ev.target.tagName === "SELECT")) return;
  const key = ev.key.toLowerCase();
  if (dialogKind === "decision") {
    if (!canAct()) return;
    if (key === "s") { closeDialog(); act(STOP); } else if (key === "k" && state.legal.includes(KOIKOI)) { closeDialog(); act(KOIKOI); } else if (key === "h") requestHint();
    return;
  }
  if (dialogKind) return;
  if (key === "h") { requestHint(); return; }
  if (key === "d" && state.legal.includes(DECLARE)) { act(DECLARE); return; }
  if (key === "escape" && selected !== null) { selected = null; render(); return; }
  const n = Number(key);
  if (!Number.isInteger(n) || n < 1) return;
  const choices = [...tableChoices().values()];
  if (choices.length) { if (n <= choices.length) act(choices[n - 1]); return; }
  if (state.phase === "play" && n <= state.hand.length) clickHand(state.hand[n - 1]);
});

document.addEventListener("DOMContentLoaded", () => {
  $("hint-button").addEventListener("click", requestHint);
  $("resign-button").addEventListener("click", confirmResign);
  $("abort-button").addEventListener("click", () => send({ type: "abort" }));
  $("berserk-button").addEventListener("click", berserk);
  loadTournament();
  $("claim-button").addEventListener("click", () => send({ type: "claim" }));
  setInterval(tick, 250);
  // Closing the tab is said to the server: the other player may claim the game sooner than after a lost connection.
  // A player's last word, so the claim against a closed tab comes sooner; a spectator has nothing to say.
  window.addEventListener("pagehide", () => { if (!K.watch && ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "bye" })); });
  $("declare-button").addEventListener("click", () => act(DECLARE));
  $("sound-button").addEventListener("click", () => setSound(!soundOn()));
  for (const kind of ["pointerdown", "keydown"]) document.addEventListener(kind, wakeSound, { capture: true });
  showSoundButton();
  $("copy-link").addEventListener("click", async () => {
    const input = $("invite-link");
    input.select();
    try { await navigator.clipboard.writeText(input.value); toast(t("table.copied")); } catch (e) { document.execCommand("copy"); }
  });
  // Your own table's address is your resume link (only you have it): offered for another device.
  if (K.token) $("resume-link").value = `${location.origin}/play/${K.token}`;
  $("copy-resume").addEventListener("click", async () => {
    const input = $("resume-link");
    input.select();
    try { await navigator.clipboard.writeText(input.value); toast(t("table.copied")); } catch (e) { document.execCommand("copy"); }
  });
  $("dialog").addEventListener("cancel", (ev) => { if (dialogKind === "decision") ev.preventDefault(); });
  // A turned phone or a resized window: groups fold or unfold, fans are laid out again.
  for (const m of [narrow, touchOnly]) m.addEventListener("change", () => { if (state) render(); });
  let resizing = null;
  window.addEventListener("resize", () => { clearTimeout(resizing); resizing = setTimeout(() => { if (state) layoutFans(); }, 100); });
  connect();
});
