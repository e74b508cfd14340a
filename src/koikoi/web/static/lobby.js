// The lobby: create a table (opponent, rule preset, every rule option, match length) and list your games.
"use strict";

// The rule options (options.js): the match length has its own control above (#length), not repeated there.
const opts = new RuleOptions(document.getElementById("options"), document.getElementById("changed-count"), {
  skip: ["hands"],
  onChange: (name) => { if (name === "hands" || name === "target_score") syncLength(); syncBirth(); },
});

const $ = (id) => document.getElementById(id);

function current(name) { return opts.current(name); }

function renderOptions() {
  opts.base = K.presets[$("preset").value];
  opts.render();
  // The preset's note says its own length ("12 hands"): a table of another length says so after it.
  const hands = current("hands"), target = current("target_score");
  const length = hands ? tn("lobby.hands", hands, { n: hands }) : tn("lobby.until_target", target, { target });
  $("preset-note").textContent = t("presetdoc." + $("preset").value)
    + ("hands" in opts.changes ? " " + t("lobby.this_table", { length }) : "");
  syncLength();
  syncBirth();
}

function syncBirth() { $("birth-months").hidden = current("dealer_selection") !== "birth_month"; }

// The match length: a number of hands, or (0) until a player reaches the target score where there is one.
const LENGTHS = [1, 3, 6, 12];
const LENGTH_KEY = "koikoi.hands";  // the length last chosen in this browser, with the preset it went with
function lengthChoices() {
  const hands = current("hands"), target = current("target_score");
  const all = [...LENGTHS];
  if (!all.includes(hands) && hands > 0) all.push(hands);
  if (target > 0 || hands === 0) all.push(0);
  return all;
}
function syncLength() {
  const hands = current("hands");
  fill($("length"), ...lengthChoices().map((n) => h("option", { value: String(n), selected: n === hands },
    n ? tn("lobby.hands", n, { n }) : tn("lobby.until_target", current("target_score"), { target: current("target_score") }))));
}

function rememberLength() {
  try { localStorage.setItem(LENGTH_KEY, JSON.stringify({ preset: $("preset").value, hands: current("hands") })); } catch (e) { /* private mode */ }
}

// The length this browser chose last, where it went with the preset now chosen and this page offers it.
function recallLength() {
  let last = null;
  try { last = JSON.parse(localStorage.getItem(LENGTH_KEY) || "null"); } catch (e) { return; }
  if (!last || last.preset !== $("preset").value || !Number.isInteger(last.hands)) return;
  if (!lengthChoices().includes(last.hands)) return;
  opts.set("hands", last.hands);
}

// The lobby lists your games a page at a time (newest first); "Show older games" fetches the next page.
let gamePages = [];
let nextPage = null;

async function loadGames(more = false) {
  if (!more) gamePages = [];
  const data = await api("GET", "/api/games" + (more && nextPage ? "?before=" + encodeURIComponent(nextPage) : ""));
  gamePages = gamePages.concat(data.games);
  nextPage = data.next;
  const open = gamePages.filter((g) => g.status !== "finished");
  const done = gamePages.filter((g) => g.status === "finished");
  // The match length, apart from the rules: " · 12 hands", " · until 50 points", or nothing (damage).
  const lengthOf = (g) => g.hands ? " · " + tn("lobby.hands", g.hands, { n: g.hands })
    : g.target_score ? " · " + tn("lobby.until_target", g.target_score, { target: g.target_score }) : "";
  const item = (g) => {
    const vs = g.opponent === "friend" ? (g.opponent_name || t("level.friend")) : (g.opponent ? computerLabel(g.opponent, g.opponent_name) : g.opponent_name);
    const when = g.updated ? whenText(g.updated) : "";
    let links;
    if (g.status === "broken") {
      links = [h("span", { class: "broken", title: g.problem || "" }, t("lobby.broken") + ": " + t("error.broken"))];
    } else if (g.status === "finished") {
      links = [h("a", { href: `/replay/${g.game_id}?token=${g.token}`, class: "button secondary" }, t("match.replay")),
        h("a", { href: `/api/games/${g.game_id}/record?token=${g.token}`, class: "button secondary" }, t("match.download"))];
    } else {
      links = [h("a", { href: `/play/${g.token}`, class: "button primary" }, t("lobby.resume"))];
    }
    return h("li", { "data-game": g.game_id, "data-status": g.status },
      h("span", { class: "vs" }, t("lobby.vs", { name: vs }), g.opponent_bot ? [" ", botBadge()] : null),
      h("span", { class: "meta" }, `${rulesLabel(g.rules_label, LIST_CHANGES)}${lengthOf(g)} · `,
        h("span", { class: "score" }, `${g.scores[g.seat]}–${g.scores[1 - g.seat]}`),
        when ? [" · ", h("span", { class: "when" }, when)] : null),
      h("span", { class: "links" }, ...links));
  };
  fill($("unfinished"), ...(open.length ? open.map(item) : [h("li", { class: "empty" }, t("lobby.none"))]));
  fill($("finished"), ...(done.length ? done.map(item) : [h("li", { class: "empty" }, t("lobby.none"))]));
  const button = $("more-games");
  if (button) button.hidden = !nextPage;
}

document.addEventListener("DOMContentLoaded", () => {
  const preset = $("preset");
  for (const name of Object.keys(K.presets)) preset.appendChild(h("option", { value: name }, t("preset." + name)));
  preset.value = localStorage.getItem("koikoi.preset") || "nintendo";
  if (!(preset.value in K.presets)) preset.value = "nintendo";
  // A signed-in player sits at the table under their account's name; a guest, under the name they gave last.
  $("name").value = K.account || localStorage.getItem("koikoi.name") || "";
  const opp = localStorage.getItem("koikoi.opponent");
  if (opp) $("opponent").value = opp;
  // A clock is chosen for a game between two people only: the computer never makes anyone wait.
  for (const c of K.time_controls) $("clock").appendChild(h("option", { value: c }, clockName(c)));
  const showClock = () => { $("clock-box").hidden = $("opponent").value !== "friend"; };
  $("opponent").addEventListener("change", showClock);
  showClock();
  // The rule set and the match length chosen are kept for the next visit, the table made or not.
  preset.addEventListener("change", () => {
    opts.changes = {}; renderOptions();
    try { localStorage.setItem("koikoi.preset", preset.value); } catch (e) { /* private mode */ }
  });
  $("length").addEventListener("change", () => {
    const n = Number($("length").value);
    opts.set("hands", n);
    renderOptions();
    rememberLength();
  });
  $("reset-options").addEventListener("click", () => { opts.changes = {}; renderOptions(); });
  opts.base = K.presets[preset.value];
  recallLength();
  renderOptions();
  const more = $("more-games");
  if (more) more.addEventListener("click", () => loadGames(true).catch((e) => toast(errorText(e.code, e.message))));
  $("new-game").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    $("form-error").textContent = "";
    const name = $("name").value.trim();
    if (!K.account) localStorage.setItem("koikoi.name", name);
    localStorage.setItem("koikoi.preset", preset.value);
    localStorage.setItem("koikoi.opponent", $("opponent").value);
    rememberLength();
    $("create").disabled = true;
    try {
      const game = await api("POST", "/api/games", {
        name, opponent: $("opponent").value, rules: { preset: preset.value, options: opts.changes },
        birth_months: current("dealer_selection") === "birth_month"
          ? [Number($("birth-0").value), Number($("birth-1").value)] : undefined,
        clock: $("opponent").value === "friend" ? $("clock").value : undefined,
        on_time: $("opponent").value === "friend" && $("clock").value !== "none" ? $("on-time").value : undefined,
        private: $("private").checked,  // nobody may watch it
      });
      window.location.href = game.url;
    } catch (e) {
      $("form-error").textContent = errorText(e.code, e.message) + (e.code === "bad_rules" ? " — " + e.message : "");
      $("create").disabled = false;
    }
  });
  loadGames().catch((e) => toast(errorText(e.code, e.message)));
});
