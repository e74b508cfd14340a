// The tournaments' list (and the form that makes one) and a tournament's page: its countdown, its
// standings pushed over /ws/tournament/<id>, join / pause / withdraw, and the player's next match, which
// the page opens as soon as the server says it is made.
"use strict";

function kindName(kind) { return t("tournament." + kind); }

function statusText(tour) {
  if (tour.status === "upcoming") return t("tournament.starts_at", { when: whenText(tour.starts) });
  if (tour.status === "running" && tour.kind === "swiss") return t("tournament.round_of", { round: tour.round, rounds: tour.rounds });
  return t("tournament." + tour.status);
}

function countdown(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
  return (h ? h + ":" + String(m).padStart(2, "0") : String(m)) + ":" + String(r).padStart(2, "0");
}

// -- the list ---------------------------------------------------------------------------------------------

async function showList() {
  let data;
  try { data = await api("GET", "/api/tournaments"); } catch (e) { return; }
  for (const status of ["running", "upcoming", "finished"]) {
    const ul = document.getElementById("list-" + status);
    if (!ul) continue;
    const items = (data[status] || []).map((tour) => h("li", {},
      h("a", { href: tour.url }, tour.name), " ",
      h("span", { class: "t-meta" }, [kindName(tour.kind), rulesLabel(tour.rules, 2), tn("lobby.hands", tour.hands, { n: tour.hands }),
        clockName(tour.clock), tour.rated ? t("tournament.rated_badge") : t("tournament.casual_badge"), tn("tournament.players", tour.players, { n: tour.players }),
        statusText(tour)].join(" · "))));
    fill(ul, ...(items.length ? items : [h("li", { class: "empty" }, t("tournament.none"))]));
  }
}

function setUpForm() {
  const form = document.getElementById("new-tournament");
  if (!form) return;
  for (const opt of form.clock.options) opt.textContent = clockName(opt.value);
  const follow = () => {
    const arena = form.kind.value === "arena";
    for (const el of form.querySelectorAll(".arena-only")) el.hidden = !arena;
    for (const el of form.querySelectorAll(".swiss-only")) el.hidden = arena;
    for (const el of form.querySelectorAll(".password-only")) el.hidden = form.access.value !== "password";
  };
  // The table options (options.js): a casual tournament may change any; a rated one is played under its
  // preset as it is (as a rated game is), so the options wait, kept, until "rated" is unticked.
  const opts = new RuleOptions(document.getElementById("options"), document.getElementById("changed-count"), { skip: ["hands"] });
  const box = document.getElementById("options-box");
  const followRated = () => {
    document.getElementById("options-rated").hidden = !form.rated.checked;
    for (const el of box.querySelectorAll("input, select, button")) el.disabled = form.rated.checked;
  };
  const preset = () => { opts.choose(K.presets[form.preset.value]); followRated(); };
  form.preset.addEventListener("change", preset);
  document.getElementById("reset-options").addEventListener("click", preset);
  preset();
  for (const r of form.querySelectorAll("input[name=kind]")) r.addEventListener("change", follow);
  form.access.addEventListener("change", follow);
  form.rated.addEventListener("change", followRated);
  follow();
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const arena = form.kind.value === "arena";
    const body = {
      kind: form.kind.value, name: form.name.value, hands: Number(form.hands.value),
      rules: { preset: form.preset.value, ...(form.rated.checked ? {} : { options: opts.changes }) },
      clock: form.clock.value, starts_in: Number(form.starts_in.value), rated: form.rated.checked, bots: form.bots.checked,
    };
    if (arena) Object.assign(body, { minutes: Number(form.minutes.value), berserk: form.berserk.checked });
    else {
      Object.assign(body, { rounds: Number(form.rounds.value), late: form.late.value });
      if (form.round_every.value) body.round_every = 60 * Number(form.round_every.value);  // minutes, sent as seconds
    }
    body.access = form.access.value;
    if (body.access === "password") body.password = form.password.value;
    try {
      const made = await api("POST", "/api/tournaments", body);
      location.href = made.url;
    } catch (e) { toast(errorText(e.code, e.message, e.params)); }
  });
}

// -- one tournament ---------------------------------------------------------------------------------------

let view = K.view || null;
let page = view ? view.standings.page : 1;
let socket = null;
let shownAt = Date.now();

const COLUMN_KEYS = {
  rank: "tournament.col_rank", player: "tournament.col_player", score: "tournament.col_score", games: "tournament.col_games",
  performance: "tournament.col_performance", points: "tournament.col_points", buchholz: "tournament.col_buchholz",
  sonneborn_berger: "tournament.col_sonneborn_berger",
};

function headCells(kind) {
  const cols = kind === "arena"
    ? ["rank", "player", "score", "games", "performance"]
    : ["rank", "player", "points", "buchholz", "sonneborn_berger", "games"];
  return cols.map((c) => h("th", { scope: "col" }, t(COLUMN_KEYS[c])));
}

function rowCells(kind, r) {
  const name = h("td", { class: "t-player" }, r.name);
  if (r.bot) name.appendChild(botBadge());
  if (r.fire) name.appendChild(h("span", { class: "fire", title: t("tournament.on_fire"), "aria-label": t("tournament.on_fire") }, "🔥"));
  if (r.paused) name.appendChild(h("span", { class: "badge" }, t(kind === "arena" ? "tournament.paused" : "tournament.withdrawn")));
  if (r.playing && view.tournament.status === "running") {
    name.appendChild(document.createTextNode(" "));
    name.appendChild(h("a", { href: "/watch/" + r.playing, class: "watch-link" }, t("tournament.watch")));
  }
  const cells = [h("td", {}, String(r.rank)), name];
  if (kind === "arena") cells.push(h("td", {}, String(r.score)), h("td", {}, String(r.games)), h("td", {}, r.performance == null ? "–" : String(r.performance)));
  else cells.push(h("td", {}, String(r.points)), h("td", {}, String(r.buchholz)), h("td", {}, String(r.sonneborn_berger)), h("td", {}, String(r.games)));
  return cells;
}

function show(v) {
  view = v;
  shownAt = Date.now();
  page = v.standings.page;
  const tour = v.tournament;
  document.getElementById("t-status").textContent = [kindName(tour.kind), rulesLabel(tour.rules, 2), tn("lobby.hands", tour.hands, { n: tour.hands }),
    clockName(tour.clock), tour.rated ? t("tournament.rated_badge") : t("tournament.casual_badge"), statusText(tour)].join(" · ");
  fill(document.getElementById("t-head"), ...headCells(tour.kind));
  fill(document.getElementById("t-rows"), ...v.standings.rows.map((r) => h("tr", {}, ...rowCells(tour.kind, r))));
  document.getElementById("t-page").textContent = t("tournament.page_of", { page: v.standings.page, pages: v.standings.pages });
  document.getElementById("t-prev").disabled = v.standings.page <= 1;
  document.getElementById("t-next").disabled = v.standings.page >= v.standings.pages;
  const podium = document.getElementById("t-podium-panel");
  podium.hidden = !v.podium.length;
  fill(document.getElementById("t-podium"), ...v.podium.map((r) => h("li", {}, r.name + " — " + (tour.kind === "arena" ? r.score : r.points))));
  const open = tour.status === "upcoming" || tour.status === "running";
  const me = v.me;
  const join = document.getElementById("t-join"), pause = document.getElementById("t-pause");
  join.hidden = !open || !K.account || (me && !me.paused);
  join.textContent = me && me.paused ? t("tournament.rejoin") : t("tournament.join");
  document.getElementById("t-password-label").hidden = join.hidden || tour.access !== "password" || !!me;
  pause.hidden = !open || !me || me.paused;
  pause.textContent = t(tour.kind === "arena" ? "tournament.pause" : "tournament.withdraw");
  const game = document.getElementById("t-game");
  game.hidden = !(me && me.game);
  if (me && me.game) game.href = me.game.url;
  document.getElementById("t-me").textContent = me ? t("tournament.your_rank", { rank: me.rank }) : (K.account ? "" : t("tournament.sign_in_to_join"));
  tick();
}

function tick() {
  if (!view) return;
  const tour = view.tournament;
  const gone = (Date.now() - shownAt) / 1000;
  const el = document.getElementById("t-countdown");
  if (tour.status === "upcoming") el.textContent = t("tournament.starts_in_clock", { time: countdown(tour.seconds_to_start - gone) });
  else if (tour.status === "running" && tour.seconds_left != null) el.textContent = t("tournament.ends_in", { time: countdown(tour.seconds_left - gone) });
  else el.textContent = "";
}

// What chat.js sends (a message, a report): over the tournament's socket; false when it is not open.
function send(msg) {
  if (!socket || socket.readyState !== WebSocket.OPEN) { toast(t("tournament.offline")); return false; }
  socket.send(JSON.stringify(msg));
  return true;
}

function connect(backoff = 1000) {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  socket = new WebSocket(proto + "//" + location.host + "/ws/tournament/" + view.tournament.id);
  socket.onopen = () => { backoff = 1000; if (page !== 1) socket.send(JSON.stringify({ type: "page", page })); };
  socket.onmessage = (ev) => {
    let msg;
    try { msg = JSON.parse(ev.data); } catch (e) { return; }
    if (typeof KoiChat !== "undefined" && KoiChat.take(msg)) return;  // the tournament's chat (chat.js)
    // The page of the standings comes alike for everyone; a player's own line and match come apart ("me"),
    // when they change: the last one stays until then.
    if (msg.type === "tournament") show(Object.assign(msg, { me: msg.me || (view && view.me) || null }));
    else if (msg.type === "me" && view) show(Object.assign({}, view, { me: msg.me }));
    else if (msg.type === "paired") {
      toast(t("tournament.paired"));
      location.href = msg.url;  // the next match: at once, as an arena's clock already runs
    }
  };
  socket.onclose = () => { setTimeout(() => connect(Math.min(backoff * 2, 30000)), backoff * (0.5 + Math.random())); };
}

function setUpPage() {
  show(view);
  document.getElementById("t-join").addEventListener("click", async () => {
    const pw = document.getElementById("t-password").value;
    try {
      await api("POST", "/api/tournaments/" + view.tournament.id + "/join", pw ? { password: pw } : {});
      show(await api("GET", "/api/tournaments/" + view.tournament.id + "?page=0"));
    } catch (e) { toast(errorText(e.code, e.message, e.params)); }
  });
  document.getElementById("t-pause").addEventListener("click", async () => {
    try {
      await api("POST", "/api/tournaments/" + view.tournament.id + "/pause", {});
      show(await api("GET", "/api/tournaments/" + view.tournament.id + "?page=" + page));
    } catch (e) { toast(errorText(e.code, e.message, e.params)); }
  });
  const turn = (d) => {
    page = Math.max(1, page + d);
    if (socket && socket.readyState === 1) socket.send(JSON.stringify({ type: "page", page }));
  };
  document.getElementById("t-prev").addEventListener("click", () => turn(-1));
  document.getElementById("t-next").addEventListener("click", () => turn(1));
  setInterval(tick, 1000);
  connect();
}

document.addEventListener("DOMContentLoaded", () => {
  if (K.page === "tournament" && view) setUpPage();
  else { showList(); setUpForm(); setInterval(showList, 15000); }
});
