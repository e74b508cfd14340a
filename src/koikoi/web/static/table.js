// The table: one seat's view, played over a WebSocket. The server decides everything; this page shows
// the state it is sent, offers only the legal actions, and shows each public event as it happens.
"use strict";

const PLAY_TAKE_BASE = 48, DRAW_TAKE_BASE = 240, KOIKOI = 288, STOP = 289, DECLARE = 290;
const params = new URLSearchParams(window.location.search);
const SPEED = params.has("speed") ? Math.max(0, Number(params.get("speed")) || 0) : 1;

let state = null;          // the latest view shown
let ws = null;
let retry = 0;
let selected = null;       // a hand card waiting for the choice of table card
let queue = Promise.resolve();
let seenResults = null;    // how many hand results have been shown
let hint = null;           // the last hint, for state.seq
let dialogKind = null;

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms * SPEED));

function who(p) {
  if (!state) return "";
  if (p === state.seat) return t("table.you_who");
  const player = state.players[p];
  return player.level ? t("level." + player.level) : player.name;
}

function describeAction(a) {
  if (a < PLAY_TAKE_BASE) return t("action.play", { card: cardName(a) });
  if (a < DRAW_TAKE_BASE) {
    const c = Math.floor((a - PLAY_TAKE_BASE) / 4), r = (a - PLAY_TAKE_BASE) % 4;
    return t("action.play_take", { card: cardName(c), take: cardName((c & ~3) | r) });
  }
  if (a < KOIKOI) return t("action.take", { card: cardName(a - DRAW_TAKE_BASE) });
  return t({ 288: "action.koikoi", 289: "action.stop", 290: "action.declare" }[a]);
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

// -- the socket ---------------------------------------------------------------------------------------

function connect() {
  const proto = window.location.protocol === "https:" ? "wss" : "ws";
  ws = new WebSocket(`${proto}://${window.location.host}/ws/${K.token}`);
  ws.onopen = () => { retry = 0; document.body.classList.remove("offline"); };
  ws.onmessage = (ev) => {
    let msg;
    try { msg = JSON.parse(ev.data); } catch (e) { return; }
    if (msg.type === "state") enqueue(msg.state);
    else if (msg.type === "error") {
      toast(errorText(msg.code, msg.message));
      if (msg.state) enqueue(msg.state);
      if (msg.code === "bad_token") ws.close();
    } else if (msg.type === "hint") showHint(msg);
  };
  ws.onclose = () => {
    document.body.classList.add("offline");
    setStatus(t("status.reconnecting"));
    retry = Math.min(retry + 1, 6);
    setTimeout(connect, 250 * 2 ** retry);
  };
}

function send(msg) {
  if (!ws || ws.readyState !== WebSocket.OPEN) { toast(t("status.reconnecting")); return; }
  ws.send(JSON.stringify(msg));
}

function act(action) {
  if (!state || !state.legal.includes(action)) return;
  selected = null;
  hint = null;
  document.body.classList.add("waiting-server");
  send({ type: "action", action, seq: state.seq });
}

// -- showing a new state ------------------------------------------------------------------------------

function enqueue(next) {
  queue = queue.then(() => show(next)).catch((e) => console.error(e));
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
  document.body.classList.remove("waiting-server");
  if (state && next.seq < state.seq) return; // an old message overtaken by a newer one
  const events = newEvents(state, next);
  if (seenResults === null) seenResults = next.results.length;
  for (const e of events) await reveal(e, next);
  state = next;
  render();
  if (next.results.length > seenResults) {
    const fresh = next.results.slice(seenResults);
    seenResults = next.results.length;
    for (let i = 0; i < fresh.length; i++) {
      const number = next.results.length - fresh.length + i + 1;
      await handSummary(fresh[i], number, next.match_over && i === fresh.length - 1);
    }
  }
  if (state.match_over) matchSummary();
  else if (state.to_move && state.phase === "decision") decisionDialog();
}

// A played or drawn card is shown on its own, with what it takes, before the table changes.
async function reveal(e, next) {
  if (e.kind === "koikoi" && e.player !== next.seat) toast(describeEvent(e));
  if (SPEED === 0 || (e.kind !== "play" && e.kind !== "draw")) return;
  const box = $("reveal");
  fill(box,
    h("div", { class: "reveal-who" }, e.kind === "draw" ? t("table.drawn") : who(e.player)),
    cardEl(e.card, { cls: "revealed " + e.kind }),
    h("div", { class: "reveal-text" }, describeEvent(e)),
  );
  box.classList.add("on");
  for (const c of e.captured) {
    const el = document.querySelector(`#field .card[data-card="${c}"]`);
    if (el) el.classList.add("taken");
  }
  await sleep(e.kind === "draw" ? 900 : 700);
  box.classList.remove("on");
}

function setStatus(text) { $("status").textContent = text; }

function statusText() {
  if (state.status === "waiting") return t("status.waiting_friend");
  if (state.match_over) return t("status.match_over");
  if (!state.to_move) return t("status.opponent_turn", { name: who(1 - state.seat) });
  if (state.phase === "draw_choice") return t("status.choose_draw_take", { card: cardName(state.drawn_card) });
  if (state.phase === "decision") return t("status.decide");
  if (selected !== null) return t("status.choose_take", { card: cardName(selected) });
  return t("status.your_turn");
}

function playOptions(c) {
  return state.legal.filter((a) => a === c || (a >= PLAY_TAKE_BASE && a < DRAW_TAKE_BASE &&
                                              Math.floor((a - PLAY_TAKE_BASE) / 4) === c));
}

// The table cards the player may pick now, each with the action it means.
function tableChoices() {
  if (!state || !state.to_move) return new Map();
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
  if (!state.to_move || state.phase !== "play") return;
  const opts = playOptions(c);
  if (opts.length === 1) act(opts[0]);
  else if (opts.length > 1) { selected = selected === c ? null : c; render(); }
}

function render() {
  const s = state;
  const me = s.seat, opp = 1 - s.seat;
  document.body.classList.toggle("my-turn", s.to_move);
  document.body.dataset.seq = s.seq;  // for tests and for anyone reading the page's state
  for (const [p, side] of [[opp, $("side-1")], [me, $("side-0")]]) renderSide(p, side);
  $("stock-count").textContent = s.stock_count;
  $("stock").setAttribute("aria-label", t("table.stock_count", { n: s.stock_count }));
  const field = $("field");
  const choices = tableChoices();
  fill(field, ...s.table.map((c) => {
    const pick = choices.get(c);
    const el = cardEl(c, { button: pick !== undefined, cls: pick !== undefined ? "pick" : "" });
    if (selected !== null && monthOf(c) === monthOf(selected) && pick === undefined) el.classList.add("match");
    if (pick !== undefined) el.addEventListener("click", () => act(pick));
    return el;
  }));
  const reveal = $("reveal");
  if (s.drawn_card !== null && s.drawn_card !== undefined) {
    fill(reveal, h("div", { class: "reveal-who" }, t("table.drawn")), cardEl(s.drawn_card, { cls: "revealed" }));
    reveal.classList.add("on");
  } else {
    reveal.classList.remove("on");
    fill(reveal);
  }
  const hand = $("hand");
  fill(hand, ...s.hand.map((c, i) => {
    const playable = s.to_move && s.phase === "play" && playOptions(c).length > 0;
    const el = cardEl(c, { button: true, cls: (playable ? "playable" : "") + (selected === c ? " selected" : "") });
    el.disabled = !playable;
    el.setAttribute("aria-keyshortcuts", String(i + 1));
    el.appendChild(h("span", { class: "key" }, String(i + 1)));
    const matches = s.table.filter((x) => monthOf(x) === monthOf(c)).length;
    if (playable && matches) el.classList.add("has-match");
    if (hint && hint.seq === s.seq && hint.choices.length && hint.choices[0].action < DRAW_TAKE_BASE) {
      const a = hint.choices[0].action;
      const best = a < PLAY_TAKE_BASE ? a : Math.floor((a - PLAY_TAKE_BASE) / 4);
      if (best === c) el.classList.add("hinted");
    }
    el.addEventListener("click", () => clickHand(c));
    return el;
  }));
  setStatus(statusText());
  // The last moves of this hand, newest first, so a player who looked away can catch up.
  fill($("log"), ...s.events.slice(-4).reverse().map((e) => h("li", {}, describeEvent(e))));
  $("hint-button").hidden = !(s.hints && s.to_move);
  $("declare-button").hidden = !s.legal.includes(DECLARE);
  const month = t("month." + s.month);
  const length = s.hands_in_match ? t("table.hand_of", { n: s.hand_number, total: s.hands_in_match })
    : t("table.hand_n", { n: s.hand_number });
  $("match-info").textContent = `${length} · ${month} · ${t("table.dealer")}: ${who(s.dealer)}`;
  const box = $("invite-box");
  box.hidden = s.status !== "waiting";
  if (s.status === "waiting" && s.invite_token) $("invite-link").value = `${location.origin}/invite/${s.invite_token}`;
  if (!(hint && hint.seq === s.seq)) $("hint-box").hidden = true;
}

function renderSide(p, side) {
  const s = state;
  const bar = side.querySelector(".bar");
  const player = s.players[p];
  const label = p === s.seat ? t("table.you") : player.level ? t("level." + player.level) : player.name;
  fill(bar.querySelector(".who"),
    h("b", {}, label),
    p === s.dealer ? h("span", { class: "badge dealer", title: t("table.dealer") }, t("table.dealer_short")) : null,
    s.current_player === p && !s.match_over ? h("span", { class: "badge turn" }, t("table.to_move")) : null,
  );
  bar.querySelector(".score").textContent = t("table.score", { n: s.scores[p] });
  const calls = s.koikoi_calls[p];
  bar.querySelector(".calls").textContent = calls ? t("table.calls", { n: calls }) : "";
  const count = bar.querySelector(".hand-count");
  if (count) {
    fill(count, h("span", { class: "mini-backs", "aria-hidden": "true" },
      ...Array.from({ length: s.opponent_hand_count }, () => h("i"))),
      t("table.cards_in_hand", { n: s.opponent_hand_count }));
  }
  const caps = side.querySelector(".captures");
  fill(caps, ...KIND_KEYS.map((k) => {
    const cards = s.piles[p][k];
    return h("div", { class: "group " + k, "data-kind": k },
      h("div", { class: "group-label" }, t("kind." + k), " ", h("span", { class: "count" }, String(cards.length))),
      h("div", { class: "group-cards" }, ...cards.map((c) => cardEl(c, { small: true }))));
  }));
  const prog = side.querySelector(".progress");
  const made = s.yaku[p];
  fill(prog,
    ...made.map((y) => h("span", { class: "chip made", title: t("yaku." + y.name) }, `${yakuShort(y.name)} ${y.points}`)),
    ...s.progress[p].filter((x) => x.have > 0 && x.have < x.need).map((x) =>
      h("span", { class: "chip", title: `${t("yaku." + x.yaku)}: ${t("yakudoc." + x.yaku)}` },
        `${yakuShort(x.yaku)} ${x.have}/${x.need}`)),
    made.length ? h("span", { class: "chip total" }, t("table.yaku_total", { n: s.yaku_scores[p],
      mult: s.multipliers[p] > 1 ? " ×" + s.multipliers[p] : "" })) : null,
  );
}

// -- dialogs ------------------------------------------------------------------------------------------

function openDialog(kind, ...children) {
  const d = $("dialog");
  dialogKind = kind;
  fill($("dialog-body"), ...children);
  if (!d.open) d.showModal();
  const first = d.querySelector("button.primary");
  if (first) first.focus();
}

function closeDialog() {
  const d = $("dialog");
  dialogKind = null;
  if (d.open) d.close();
}

function yakuList(yaku) {
  return h("ul", { class: "yaku-list" }, ...yaku.map((y) => h("li", {}, h("span", {}, t("yaku." + y.name)),
    h("b", {}, String(y.points)))));
}

function decisionDialog() {
  const st = state.stakes;
  if (!st) return;
  const body = [
    h("h2", {}, t("decision.title")),
    yakuList(st.yaku),
    h("p", { class: "stakes" }, st.multiplier > 1
      ? t("decision.points_mult", { base: st.base, mult: st.multiplier, points: st.points })
      : t("decision.points", { points: st.points })),
    h("p", { class: "hint-text" }, st.koikoi_allowed ? t("decision.explain") : t("decision.no_koikoi")),
    h("div", { class: "buttons" },
      h("button", { class: "primary", id: "stop-button", onclick: () => { closeDialog(); act(STOP); } },
        t("decision.stop", { points: st.points }) + " (S)"),
      st.koikoi_allowed ? h("button", { class: "danger", id: "koikoi-button",
        onclick: () => { closeDialog(); act(KOIKOI); } }, t("decision.koikoi") + " (K)") : null,
      state.hints ? h("button", { class: "secondary", onclick: requestHint }, t("table.hint") + " (H)") : null),
    h("div", { class: "hint-box", id: "decision-hint", hidden: true }),
  ];
  openDialog("decision", ...body);
}

function resultHeadline(r, number) {
  if (r.winner === null || r.winner === undefined) {
    return r.deltas.some((d) => d !== 0) ? t("summary.exhausted_scored", { n: number }) : t("summary.drawn", { n: number });
  }
  return r.winner === state.seat ? t("summary.you_won", { n: number, points: r.points })
    : t("summary.they_won", { n: number, name: who(r.winner), points: r.points });
}

// The winner's captures as the hand ended, grouped by kind.
function lastPiles(p) {
  const piles = state.previous_piles && state.previous_piles[p];
  if (!piles) return null;
  return h("div", { class: "summary-pile" }, ...KIND_KEYS.filter((k) => piles[k].length).map((k) =>
    h("div", { class: "summary-group" }, ...piles[k].map((c) => cardEl(c, { small: true })))));
}

function handSummary(r, number, last) {
  return new Promise((resolve) => {
    const body = [
      h("h2", {}, resultHeadline(r, number)),
      r.reason === "hand_bonus" ? h("p", {}, t("summary.hand_bonus")) : null,
      r.yaku.length ? yakuList(r.yaku) : null,
      r.winner !== null && r.winner !== undefined && lastPiles(r.winner),
      r.multiplier > 1 ? h("p", {}, t("decision.points_mult", { base: r.base, mult: r.multiplier, points: r.points })) : null,
      h("p", { class: "scores" }, t("summary.scores", { you: state.scores[state.seat], them: state.scores[1 - state.seat] })),
      h("div", { class: "buttons" }, h("button", { class: "primary", id: "next-hand", onclick: () => { closeDialog(); resolve(); } },
        last ? t("summary.see_result") : t("summary.next_hand"))),
    ];
    openDialog("summary", ...body);
    $("dialog").addEventListener("close", resolve, { once: true });
  });
}

function matchSummary() {
  if (dialogKind === "match") return;
  const o = state.outcome || { winner: state.match_winner, scores: state.scores };
  const headline = o.winner === null || o.winner === undefined ? t("match.draw")
    : o.winner === state.seat ? t("match.you_won") : t("match.they_won", { name: who(o.winner) });
  const rows = state.results.map((r, i) => h("tr", {},
    h("td", {}, String(i + 1)),
    h("td", {}, r.yaku.map((y) => t("yaku." + y.name)).join(", ") || "—"),
    h("td", {}, (r.deltas[state.seat] > 0 ? "+" : "") + r.deltas[state.seat]),
    h("td", {}, (r.deltas[1 - state.seat] > 0 ? "+" : "") + r.deltas[1 - state.seat])));
  const q = `?token=${encodeURIComponent(K.token)}`;
  openDialog("match",
    h("h2", {}, headline),
    h("p", { class: "scores" }, t("summary.scores", { you: o.scores[state.seat], them: o.scores[1 - state.seat] })),
    h("table", { class: "hands-table" },
      h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, t("rules.yaku")), h("th", {}, t("table.you")),
        h("th", {}, who(1 - state.seat)))),
      h("tbody", {}, ...rows)),
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
    known(c.points) ? h("b", { class: "hint-points" }, t("hint.points", { v: fmt(c.points) })) : null,
    withWin && known(c.win) ? h("span", { class: "hint-win" }, t("hint.win", { p: Math.round(c.win * 100) })) : null));
  let explain = null;
  if (decision && msg.choices.length > 1) {
    const v = Object.fromEntries(msg.choices.map((c) => [c.action, c.points]));
    explain = h("p", {}, t(msg.choices[0].action === KOIKOI ? "hint.koikoi_better" : "hint.stop_better",
      { stop: fmt(v[STOP]), koikoi: fmt(v[KOIKOI]) }));
  }
  fill(box, h("div", { class: "hint-title" }, t(withWin ? "hint.title_match" : "hint.title")), h("ol", {}, ...items), explain);
  box.hidden = false;
  if (!decision) render();
}

// -- keyboard -----------------------------------------------------------------------------------------

document.addEventListener("keydown", (ev) => {
  if (!state || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (ev.target && (ev.target.tagName === "INPUT" || ev.target.tagName === "SELECT")) return;
  const key = ev.key.toLowerCase();
  if (dialogKind === "decision") {
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
  $("declare-button").addEventListener("click", () => act(DECLARE));
  $("copy-link").addEventListener("click", async () => {
    const input = $("invite-link");
    input.select();
    try { await navigator.clipboard.writeText(input.value); toast(t("table.copied")); } catch (e) { document.execCommand("copy"); }
  });
  // Your own table's address is your resume link (only you have it): offered for another device.
  $("resume-link").value = `${location.origin}/play/${K.token}`;
  $("copy-resume").addEventListener("click", async () => {
    const input = $("resume-link");
    input.select();
    try { await navigator.clipboard.writeText(input.value); toast(t("table.copied")); } catch (e) { document.execCommand("copy"); }
  });
  $("dialog").addEventListener("cancel", (ev) => { if (dialogKind === "decision") ev.preventDefault(); });
  connect();
});
