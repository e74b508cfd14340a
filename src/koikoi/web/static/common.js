// Shared by every page: translation, the API, card images, small UI helpers. No framework, no build step.
"use strict";

// The page's settings and texts come as JSON data blocks (no inline script: the CSP forbids it).
function pageData(id) {
  const el = document.getElementById(id);
  try { return el ? JSON.parse(el.textContent) : {}; } catch (e) { return {}; }
}
const K = pageData("koikoi-config");
const CATALOG = pageData("koikoi-i18n");
window.KOIKOI = K;  // for the console and the tests
window.I18N = CATALOG;

function t(key, params) {
  let text = Object.prototype.hasOwnProperty.call(CATALOG, key) ? CATALOG[key] : key;
  if (params) text = text.replace(/\{(\w+)\}/g, (m, name) => (name in params ? String(params[name]) : m));
  return text;
}

// A text that depends on a count: the key's form for the CLDR plural category of `n` in the page's
// language (`key.one`, `key.few`, `key.many`, `key.other`, ...), `key.other` when that form is missing.
function tn(key, n, params) {
  const form = key + "." + new Intl.PluralRules(K.lang || "en").select(n);
  return t(Object.prototype.hasOwnProperty.call(CATALOG, form) ? form : key + ".other", params);
}

const KIND_KEYS = ["brights", "animals", "ribbons", "chaff"];

function cardName(c) { return t("card." + c); }

// A time control in the player's words (koikoi.clocks): "10 s a move + 1:00 in the bank", "3 days a move".
function clockName(c) {
  const days = /^(\d+)d$/.exec(c);
  if (days) return tn("clock.days", Number(days[1]), { n: days[1] });
  const [per, bank] = c.split("+").map(Number);
  return t("clock.real_time", { per, bank: clockTime(bank) });
}

// A game's time control, or "No clock" for none: what the lobby's lists say of a seek or a game.
function clockOrNone(c) { return c ? clockName(c) : t("clock.none"); }

// Fill a time-control <select> (its first option is "none") with the controls this server offers, the
// first real-time one chosen; with `rated`, a checkbox, "none" is not offered while it is checked (a
// rated game has a clock).
function clockChoice(select, rated) {
  for (const c of K.time_controls || []) select.appendChild(h("option", { value: c }, clockName(c)));
  const first = (K.time_controls || []).find((c) => c.includes("+"));
  if (first) select.value = first;
  if (!rated) return;
  const follow = () => {
    select.options[0].disabled = rated.checked;
    if (rated.checked && select.value === "none" && first) select.value = first;
  };
  rated.addEventListener("change", follow);
  follow();
}

// Dates and moments, written one way on every page, in the page's language (as the server's Babel writes
// them, koikoi.web.i18n.Translator.date and .when) and in the reader's own time zone.
function dateText(value) {
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? "?" : d.toLocaleDateString(K.lang, { dateStyle: "medium" });
}
function whenText(value) {
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? "?" : d.toLocaleString(K.lang, { dateStyle: "medium", timeStyle: "short" });
}

// A moment the server wrote (in UTC) is written again in the reader's time zone.
document.addEventListener("DOMContentLoaded", () => {
  for (const el of document.querySelectorAll("time[datetime][data-when]")) el.textContent = whenText(el.getAttribute("datetime"));
});

// Seconds left on a clock: 0:42, 1:05:00, or days and hours for a correspondence game.
function clockTime(sec) {
  sec = Math.max(0, Math.ceil(sec));
  if (sec >= 86400) return tn("clock.days_left", Math.floor(sec / 86400), { n: Math.floor(sec / 86400), h: Math.floor((sec % 86400) / 3600) });
  const hours = Math.floor(sec / 3600), m = Math.floor((sec % 3600) / 60), s = String(sec % 60).padStart(2, "0");
  return hours ? `${hours}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

// A game's rules in the player's words, from the server's `rules_label` ({preset, name, changes}; see
// koikoi/web/rulelabels.py, which words them the same way for the server's pages): "Nintendo", or
// "Nintendo · Koi-koi bonus: ×2 after any koi-koi"; with `limit`, that many changes and then "+N more".
const OFF_AT_ZERO = new Set(["goko", "shiko", "ame_shiko", "sanko", "ino_shika_cho", "akatan", "aotan", "akatan_aotan",
  "tane", "tanzaku", "kasu", "tsukimi_zake", "hanami_zake", "tsukifuda", "hand_bonus"]);
function ruleChangeText(c) {
  let shown;
  if (typeof c.value === "boolean") shown = t(c.value ? "rules.yes" : "rules.no");
  else if (typeof c.value === "number") shown = c.value === 0 && OFF_AT_ZERO.has(c.option) ? t("rules.off") : String(c.value);
  else {
    const key = "choice." + c.option + "." + c.value;
    shown = Object.prototype.hasOwnProperty.call(CATALOG, key) ? t(key) : String(c.value);
  }
  return t("rulelabel.change", { option: t("opt." + c.option), value: shown });
}
function rulesLabel(r, limit) {
  if (!r) return "?";
  if (!r.preset) return r.name === "custom" ? t("rulelabel.custom") : (r.name || "?");
  if (!r.changes.length) return t("preset." + r.preset);
  const named = limit === undefined ? r.changes : r.changes.slice(0, limit);
  const texts = named.map(ruleChangeText);
  const more = r.changes.length - named.length;
  if (more) texts.push(tn("rulelabel.more", more, { n: more }));
  return t("rulelabel.with", { preset: t("preset." + r.preset), changes: texts.join(t("rulelabel.separator")) });
}
const LIST_CHANGES = 3;  // changes a list names (rulelabels.LIST_CHANGES)

// Action numbers as koikoi.actions numbers them: 0-47 play a card, 48-239 play one and take a chosen table
// card, 240-287 take a table card with the drawn one, then koi-koi, stop, declare.
const PLAY_TAKE_BASE = 48, DRAW_TAKE_BASE = 240, KOIKOI = 288, STOP = 289, DECLARE = 290;

// An action in the player's words ("play …", "play … and take …", "koi-koi"): the hints and the review.
function describeAction(a) {
  if (a < PLAY_TAKE_BASE) return t("action.play", { card: cardName(a) });
  if (a < DRAW_TAKE_BASE) {
    const c = Math.floor((a - PLAY_TAKE_BASE) / 4), r = (a - PLAY_TAKE_BASE) % 4;
    return t("action.play_take", { card: cardName(c), take: cardName((c & ~3) | r) });
  }
  if (a < KOIKOI) return t("action.take", { card: cardName(a - DRAW_TAKE_BASE) });
  return t({ [KOIKOI]: "action.koikoi", [STOP]: "action.stop", [DECLARE]: "action.declare" }[a]);
}
function monthOf(c) { return Math.floor(c / 4) + 1; }
function kindOf(c) { return K.kinds ? K.kinds[c] : ""; }

// One card as an <img> inside a button-like element; `opts.button` makes it focusable and clickable.
function cardEl(c, opts = {}) {
  const el = document.createElement(opts.button ? "button" : "div");
  el.className = "card" + (opts.small ? " small" : "") + (opts.cls ? " " + opts.cls : "");
  if (opts.button) el.type = "button";
  el.dataset.card = c;
  const img = document.createElement("img");
  img.src = "/cards/" + c + ".svg";
  img.alt = cardName(c);
  img.draggable = false;
  el.title = cardName(c) + " — " + t("month." + monthOf(c));
  el.appendChild(img);
  return el;
}

function backEl(opts = {}) {
  const el = document.createElement("div");
  el.className = "card back" + (opts.small ? " small" : "");
  const img = document.createElement("img");
  img.src = "/cards/back.svg";
  img.alt = "";
  el.appendChild(img);
  return el;
}

async function api(method, url, body) {
  const init = { method, headers: {}, credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(url, init);
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (!res.ok) {
    const err = new Error((data && data.message) || res.statusText);
    err.code = data && data.error;
    err.params = (data && data.params) || {};  // the numbers the message names, for the page's own words
    err.status = res.status;
    throw err;
  }
  return data;
}

// An error from the server in the page's language: a known code has its own text (with the numbers the
// server gave, `params`), else the server's words.
function errorText(code, message, params) {
  const key = "error." + code;
  return Object.prototype.hasOwnProperty.call(CATALOG, key) ? t(key, params || {}) : message || t("error.server");
}

let toastTimer = null;
function toast(text, ms = 3500) {
  const el = document.getElementById("toast");
  if (!el) return;
  el.textContent = text;
  el.classList.add("show");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => el.classList.remove("show"), ms);
}

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
  return el;
}

// The mark beside a bot's name, wherever its name is shown (docs/web.md, "Bots online").
function botBadge() {
  return h("span", { class: "badge bot", title: t("bot.badge_title") }, t("bot.badge"));
}

// Replace an element's children, skipping null/undefined/false (for conditional parts).
function fill(el, ...kids) {
  el.replaceChildren(...kids.flat().filter((k) => k !== null && k !== undefined && k !== false));
}

function yakuLabel(y) {
  return t("yaku." + y.name) + " " + y.points;
}

// A yaku's name without its gloss in brackets, for the small chips at the table.
function yakuShort(name) {
  return t("yaku." + name).replace(/\s*[(（].*[)）]\s*$/, "");
}

// The computer players have names, one per level ("Hana" plays easy), so that a sentence built around a
// player's name reads right in every language; the level is said beside the name, never in its place.
// A level this page has no name for (an alias such as "greedy") keeps the name it was given.
function computerName(level, fallback) {
  const key = "computer.name." + level;
  return Object.prototype.hasOwnProperty.call(CATALOG, key) ? t(key) : (fallback || level);
}

// The name with its level: "Hana (easy)", for the lists where the level is the point.
function computerLabel(level, fallback) {
  const key = "computer.level." + level;
  if (!Object.prototype.hasOwnProperty.call(CATALOG, key)) return computerName(level, fallback);
  return t("computer.named", { name: computerName(level), level: t(key) });
}

document.addEventListener("DOMContentLoaded", () => {
  const sel = document.getElementById("lang-select");
  if (sel) sel.addEventListener("change", () => {
    const url = new URL(window.location.href);
    url.searchParams.set("lang", sel.value);
    window.location.href = url.toString();
  });
  for (const el of document.querySelectorAll("select[data-autosubmit]")) {
    el.addEventListener("change", () => el.form.submit());
  }
  // The phone's menu (the button shows only on a narrow screen): a tap opens the links under the header;
  // Escape, a tap elsewhere or a second tap closes them.
  const menu = document.getElementById("menu-button"), header = menu && menu.closest("header");
  if (menu) {
    const open = (on) => { header.classList.toggle("menu-open", on); menu.setAttribute("aria-expanded", String(on)); };
    menu.addEventListener("click", () => open(!header.classList.contains("menu-open")));
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && header.classList.contains("menu-open")) { open(false); menu.focus(); }
    });
    document.addEventListener("click", (e) => { if (!header.contains(e.target)) open(false); });
  }
});

// -- the review's reasons (a game's review, a puzzle's solution) -----------------------------------------

function shortPoints(x) { return Number.isInteger(x) ? String(x) : x.toFixed(1); }
function cardList(cs) { return cs.length ? cs.map(cardName).join(", ") : t("review.nothing"); }

// One reason part, in the page's language (the server's English "reason" says the same).
function reasonPart(p) {
  switch (p.kind) {
    case "stop_was_worth":
      return p.koikoi < 0
        ? t("review.reason_koikoi_lose", { stop: shortPoints(p.stop), loss: shortPoints(-p.koikoi) })
        : t("review.reason_koikoi_bring", { stop: shortPoints(p.stop), koikoi: shortPoints(p.koikoi) });
    case "koikoi_was_worth":
      return t("review.reason_stop", { stop: shortPoints(p.stop), koikoi: shortPoints(p.koikoi) });
    case "koikoi_cost":
      return t("review.reason_koikoi_cost", { result: (p.result > 0 ? "+" : "") + p.result, stop: shortPoints(p.stop) });
    case "took":
      if (p.discarded !== null) {
        return p.instead_discarded !== null
          ? t("review.reason_discarded_not", { card: cardName(p.discarded), other: cardName(p.instead_discarded) })
          : t("review.reason_discarded", { card: cardName(p.discarded), instead: cardList(p.instead) });
      }
      return p.instead_discarded !== null
        ? t("review.reason_took_not_discard", { took: cardList(p.took), card: cardName(p.instead_discarded) })
        : t("review.reason_took", { took: cardList(p.took), instead: cardList(p.instead) });
    case "setup":
      return t("review.reason_setup", { card: cardName(p.card), partner: cardName(p.partner), yaku: yakuShort(p.yaku) });
    case "played":
      return t("review.reason_played", { card: cardName(p.card), other: cardName(p.instead) });
    case "left_for":
      return t("review.reason_left_for", { card: cardName(p.card), yaku: yakuShort(p.yaku) });
    case "left":
      return t("review.reason_left", { card: cardName(p.card) });
    case "missed":
      return t("review.reason_missed", { yaku: yakuShort(p.yaku) });
    case "kept":
      return t("review.reason_kept", { card: cardName(p.card), yaku: yakuShort(p.yaku) });
    default:
      return "";
  }
}
