// The public lobby (/lobby): play someone now (quick pairing), the open seeks, the games being played.
// The lobby comes live over /ws/lobby, which also says when this player's seek was accepted or they were
// paired: the page then goes to their table.
"use strict";

const $ = (id) => document.getElementById(id);
let lobby = null;      // the lobby as last pushed
let mySeeks = [];      // this player's open seeks (ids)
let entry = null;      // this player's quick-pairing entry while they wait
let waitTimer = null;
let socket = null;
let retries = 0;
let leaving = false;   // going to a table: a closing socket is no trouble then

function lengthText(n) { return tn("lobby.hands", n, { n }); }
function ratingText(r, provisional) { return provisional ? r + "?" : String(r); }
function nameEl(name, account, bot) {
  const el = account ? h("a", { href: "/@/" + encodeURIComponent(name) }, name) : h("span", {}, name);
  return bot ? h("span", { class: "named" }, el, " ", botBadge()) : el;
}
function myName() {
  if (K.account) return K.account;
  const input = $("guest-name");
  const name = input ? input.value.trim() : "";
  if (name) localStorage.setItem("koikoi.name", name);
  return name || undefined;
}
function go(url) { leaving = true; window.location.href = url; }

// -- what the lobby shows -------------------------------------------------------------------------------

function render() {
  if (!lobby) return;
  const seeks = lobby.seeks;
  if (!seeks.length) fill($("seek-list"), h("li", { class: "empty" }, t("online.no_seeks")));
  else fill($("seek-list"), ...seeks.map(seekEl));
  for (const el of document.querySelectorAll("[data-waiting]")) {
    const n = (lobby.pools[el.dataset.waiting] || {}).waiting || 0;
    el.textContent = n ? tn("online.waiting_n", n, { n }) : "";
  }
  if (!lobby.games.length) fill($("playing-list"), h("li", { class: "empty" }, t("online.none_playing")));
  else fill($("playing-list"), ...lobby.games.map(gameEl));
}

function seekEl(s) {
  const mine = mySeeks.includes(s.id);
  const action = mine
    ? h("button", { type: "button", class: "secondary", onclick: () => cancelSeek(s.id) }, t("online.cancel"))
    : h("button", { type: "button", class: "primary", onclick: () => acceptSeek(s.id),
      disabled: s.rated && !K.account, title: s.rated && !K.account ? t("online.rated_sign_in") : null },
    t("online.accept"));
  return h("li", { class: "seek" + (mine ? " mine" : ""), "data-seek": s.id },
    h("span", { class: "who" }, nameEl(s.name, s.account, s.bot), " ",
      h("span", { class: "rating", title: t("online.rating") }, ratingText(s.rating, s.provisional))),
    h("span", { class: "what" },
      [rulesLabel(s.rules_label, LIST_CHANGES), lengthText(s.hands), s.rated ? t("online.rated_short") : t("online.casual"),
        s.private ? t("online.private_short") : null].filter(Boolean).join(" · ")),
    h("span", { class: "clock-name" }, clockOrNone(s.clock)),
    action);
}

function gameEl(g) {
  const players = g.players.map((p) => nameEl(p.name, p.account, p.bot));
  const names = g.players.map((p) => p.name).join(" – ");
  return h("li", { class: "playing-game", "data-game": g.game_id },
    h("span", { class: "who" }, players[0] || "?", " – ", players[1] || "?"),
    h("span", { class: "what" },
      [rulesLabel(g.rules_label, LIST_CHANGES), lengthText(g.hands), g.rated ? t("online.rated_short") : t("online.casual")].join(" · ")),
    h("span", { class: "clock-name" }, clockOrNone(g.clock)),
    // Every game listed here may be watched (a private one is not listed).
    h("a", { class: "button secondary watch-link", href: "/watch/" + encodeURIComponent(g.game_id),
      "aria-label": t("online.watch") + ": " + names }, t("online.watch")));
}

// -- the socket -----------------------------------------------------------------------------------------

function connect() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  socket = new WebSocket(scheme + "//" + location.host + "/ws/lobby");
  socket.onopen = () => { retries = 0; $("lobby-status").textContent = ""; };
  socket.onmessage = (ev) => {
    let msg;
    try { msg = JSON.parse(ev.data); } catch (e) { return; }
    if (msg.type === "lobby") {
      lobby = msg;
      mySeeks = msg.mine || [];
      render();
    } else if (msg.type === "paired") {
      go(msg.url);
    }
  };
  socket.onclose = () => {
    if (leaving) return;
    $("lobby-status").textContent = t("online.reconnecting");
    retries += 1;
    setTimeout(connect, Math.min(10000, 500 * 2 ** Math.min(retries, 5)));
  };
}

// -- seeks ----------------------------------------------------------------------------------------------

async function createSeek(ev) {
  ev.preventDefault();
  $("seek-error").textContent = "";
  const body = {
    rules: { preset: $("seek-preset").value },
    hands: Number($("seek-hands").value),
    rated: $("seek-rated").checked,
    private: $("seek-private").checked && !$("seek-rated").checked,  // a rated game is always public
    clock: $("seek-clock").value,
    name: myName(),
  };
  try {
    const out = await api("POST", "/api/lobby/seeks", body);
    localStorage.setItem("koikoi.preset", body.rules.preset);
    if (!mySeeks.includes(out.seek_id)) mySeeks.push(out.seek_id);
    if (lobby && !lobby.seeks.some((s) => s.id === out.seek_id)) lobby.seeks.unshift(out.seek);
    render();
    toast(t("online.seek_created"));
  } catch (e) {
    $("seek-error").textContent = errorText(e.code, e.message, e.params);
  }
}

async function cancelSeek(id) {
  try {
    await api("DELETE", "/api/lobby/seeks/" + encodeURIComponent(id));
    mySeeks = mySeeks.filter((x) => x !== id);
    if (lobby) lobby.seeks = lobby.seeks.filter((s) => s.id !== id);
    render();
  } catch (e) {
    toast(errorText(e.code, e.message, e.params));
  }
}

async function acceptSeek(id) {
  try {
    const out = await api("POST", "/api/lobby/seeks/" + encodeURIComponent(id) + "/accept", { name: myName() });
    go(out.url);
  } catch (e) {
    toast(errorText(e.code, e.message, e.params));
  }
}

// -- quick pairing --------------------------------------------------------------------------------------

async function quick(pool, tries = 0) {
  $("quick-error").textContent = "";
  try {
    const out = await api("POST", "/api/lobby/quick", { pool, name: myName() });
    if (out.status === "paired") { go(out.url); return; }
    entry = out;
    entry.started = Date.now();
    $("waiting").hidden = false;
    $("offer").hidden = true;
    for (const b of document.querySelectorAll(".pool")) b.disabled = true;
    tick();
    clearInterval(waitTimer);
    waitTimer = setInterval(tick, 1000);
  } catch (e) {
    // The database is busy for a moment: ask again (asking twice gives the same place in the pool).
    if (e.code === "unavailable" && tries < 5) { setTimeout(() => quick(pool, tries + 1), 1000); return; }
    $("quick-error").textContent = errorText(e.code, e.message, e.params);
  }
}

let polls = 0;
async function tick() {
  if (!entry) return;
  const waited = Math.floor((Date.now() - entry.started) / 1000);
  const pool = K.pools[entry.pool];
  $("waiting-text").textContent = t("online.searching", {
    pool: [t("preset." + pool.preset), lengthText(pool.hands), clockName(pool.clock)].join(" · "), seconds: waited });
  if (waited >= entry.offer_after && $("offer").hidden) {
    const level = entry.computer.level, name = computerName(level);
    $("offer-text").textContent = t("online.offer", { name, level: t("computer.level." + level), rating: entry.computer.rating });
    $("offer-accept").textContent = t("online.play_computer", { name });
    $("offer").hidden = false;
  }
  // Every few seconds ask after the entry too: it keeps it alive should the socket be down, and says
  // if it was paired meanwhile.
  polls += 1;
  if (polls % 3 === 0) {
    try {
      const now = await api("GET", "/api/lobby/quick/" + encodeURIComponent(entry.entry_id));
      if (now.status === "paired") go(now.url);
    } catch (e) {
      if (e.code === "no_entry") stopWaiting(t("online.entry_ended"));
    }
  }
}

function stopWaiting(message) {
  entry = null;
  clearInterval(waitTimer);
  $("waiting").hidden = true;
  for (const b of document.querySelectorAll(".pool")) b.disabled = false;
  $("quick-error").textContent = message || "";
}

// Leave the pool; true when that is done, false when the player was paired meanwhile (and goes to the game).
async function leavePool() {
  if (!entry) return true;
  const id = entry.entry_id;
  try {
    await api("DELETE", "/api/lobby/quick/" + encodeURIComponent(id));
  } catch (e) {
    if (e.code === "paired") {
      const now = await api("GET", "/api/lobby/quick/" + encodeURIComponent(id));
      go(now.url);
      return false;
    }
  }
  stopWaiting();
  return true;
}

async function playComputer() {
  const pool = K.pools[entry.pool];
  const level = entry.computer.level;
  if (!(await leavePool())) return;
  try {
    const out = await api("POST", "/api/games", {
      name: myName(), opponent: level, rules: { preset: pool.preset, options: { hands: pool.hands } } });
    go(out.url);
  } catch (e) {
    $("quick-error").textContent = errorText(e.code, e.message, e.params);
  }
}

// -- start ----------------------------------------------------------------------------------------------

document.addEventListener("DOMContentLoaded", () => {
  const guest = $("guest-name");
  if (guest) guest.value = localStorage.getItem("koikoi.name") || "";
  const presets = Object.keys(K.presets).filter((p) => K.presets[p].dealer_selection !== "birth_month");
  fill($("seek-preset"), ...presets.map((p) => h("option", { value: p }, t("preset." + p))));
  const saved = localStorage.getItem("koikoi.preset");
  $("seek-preset").value = presets.includes(saved) ? saved : "nintendo";
  clockChoice($("seek-clock"), $("seek-rated"));
  for (const b of document.querySelectorAll(".pool")) b.addEventListener("click", () => quick(b.dataset.pool));
  $("waiting-cancel").addEventListener("click", () => leavePool());
  $("offer-accept").addEventListener("click", playComputer);
  $("new-seek").addEventListener("submit", createSeek);
  // A rated game is always public: the two boxes exclude each other.
  $("seek-rated").addEventListener("change", () => {
    if ($("seek-rated").checked) $("seek-private").checked = false;
  });
  $("seek-private").addEventListener("change", () => {
    if ($("seek-private").checked) $("seek-rated").checked = false;
  });
  connect();
});
