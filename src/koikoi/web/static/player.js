// A bot's player page (/@/<bot>): challenge it (rules, match length, rated or casual), wait for its answer
// (asking after the challenge every second, which also keeps it open), then go to the table, or say why
// it declined. Whether the bot is connected is asked again every 10 s, and the button follows.
"use strict";

const $ = (id) => document.getElementById(id);
let challenge = null;  // the challenge sent, while it waits for the bot's answer
let pollTimer = null;

function myName() {
  if (K.account) return K.account;
  const input = $("challenge-name");
  const name = input ? input.value.trim() : "";
  if (name) localStorage.setItem("koikoi.name", name);
  return name || undefined;
}

function showOnline(online) {
  const status = $("bot-status");
  status.dataset.online = online ? "yes" : "no";
  status.textContent = t(online ? "bot.online" : "bot.offline");
  $("challenge-offline").hidden = online;
  if (!challenge) $("challenge-send").disabled = !online;
}

async function send(ev) {
  ev.preventDefault();
  $("challenge-error").textContent = "";
  $("challenge-send").disabled = true;
  const body = {
    bot: K.bot,
    rules: { preset: $("challenge-preset").value },
    hands: Number($("challenge-hands").value),
    rated: $("challenge-rated").checked,
    clock: $("challenge-clock").value,
    name: myName(),
  };
  try {
    challenge = await api("POST", "/api/challenges", body);
  } catch (e) {
    $("challenge-error").textContent = errorText(e.code, e.message);
    $("challenge-send").disabled = false;
    return;
  }
  $("challenge-waiting-text").textContent = t("bot.waiting", { name: K.bot });
  $("challenge-waiting").hidden = false;
  clearInterval(pollTimer);
  pollTimer = setInterval(poll, 1000);
}

function stop(message) {
  challenge = null;
  clearInterval(pollTimer);
  $("challenge-waiting").hidden = true;
  $("challenge-send").disabled = $("bot-status").dataset.online !== "yes";
  $("challenge-error").textContent = message || "";
}

// What became of the challenge: the table once accepted, or why not.
function follow(now) {
  if (now.status === "accepted" && now.url) {
    clearInterval(pollTimer);
    window.location.href = now.url;
  } else if (now.status === "declined") {
    stop(t("bot.declined", { name: K.bot, reason: t("bot.reason." + (now.reason || "generic")) }));
  } else if (now.status === "expired") {
    stop(t("bot.expired", { name: K.bot }));
  } else if (now.status === "cancelled") {
    stop();
  }
}

async function poll() {
  if (!challenge) return;
  try {
    follow(await api("GET", "/api/challenges/" + encodeURIComponent(challenge.id)));
  } catch (e) {
    if (e.code === "no_challenge") stop(t("bot.expired", { name: K.bot }));
  }
}

async function cancel() {
  if (!challenge) return;
  try {
    follow(await api("DELETE", "/api/challenges/" + encodeURIComponent(challenge.id)));
  } catch (e) {
    stop();
  }
}

async function askOnline() {
  try {
    const p = await api("GET", "/api/players/" + encodeURIComponent(K.bot));
    if (p.bot) showOnline(p.bot.online);
  } catch (e) { /* the server is away for a moment: ask again later */ }
}

document.addEventListener("DOMContentLoaded", () => {
  const name = $("challenge-name");
  if (name) name.value = localStorage.getItem("koikoi.name") || "";
  const saved = localStorage.getItem("koikoi.preset");
  if (saved && [...$("challenge-preset").options].some((o) => o.value === saved)) $("challenge-preset").value = saved;
  clockChoice($("challenge-clock"), $("challenge-rated"));
  $("challenge-form").addEventListener("submit", send);
  $("challenge-cancel").addEventListener("click", cancel);
  setInterval(askOnline, 10000);
});
