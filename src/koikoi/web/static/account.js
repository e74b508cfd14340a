// The account page: a guest signs in or creates an account; a signed-in player signs out (here or
// everywhere) or changes their password. Every form talks to /api/account/... and says what went wrong
// in the page's language.
"use strict";

// Send one form's request with its button disabled (hashing a password takes the server a moment);
// on success run `done`, else show the error's text in the form's alert.
async function submitForm(button, errorEl, request, done) {
  errorEl.textContent = "";
  button.disabled = true;
  try {
    await done(await request());
  } catch (e) {
    errorEl.textContent = errorText(e.code, e.message, e.params);
    button.disabled = false;
  }
}

function goToLobby() { window.location.href = "/"; }

function guestForms() {
  const signIn = document.getElementById("sign-in-form");
  signIn.addEventListener("submit", (ev) => {
    ev.preventDefault();
    submitForm(document.getElementById("sign-in"), document.getElementById("sign-in-error"),
      () => api("POST", "/api/account/login", {
        name: document.getElementById("sign-in-name").value.trim(),
        password: document.getElementById("sign-in-password").value,
      }), goToLobby);
  });
  const signUp = document.getElementById("sign-up-form");
  signUp.addEventListener("submit", (ev) => {
    ev.preventDefault();
    submitForm(document.getElementById("sign-up"), document.getElementById("sign-up-error"),
      () => api("POST", "/api/account/signup", {
        name: document.getElementById("sign-up-name").value.trim(),
        password: document.getElementById("sign-up-password").value,
      }), goToLobby);
  });
}

function accountForms() {
  // "Member since": the day, written again by the page in the reader's time zone (common.js's dateText).
  const since = document.getElementById("member-since");
  const created = new Date(since.dataset.created);
  if (!Number.isNaN(created.getTime())) {
    since.textContent = t("account.member_since", { date: dateText(created) });
  }
  const accountError = document.getElementById("account-error");
  const out = document.getElementById("sign-out");
  out.addEventListener("click", () => submitForm(out, accountError, () => api("POST", "/api/account/logout"), goToLobby));
  const everywhere = document.getElementById("sign-out-everywhere");
  everywhere.addEventListener("click", () =>
    submitForm(everywhere, accountError, () => api("POST", "/api/account/logout-everywhere"), goToLobby));
  const form = document.getElementById("password-form");
  const old = document.getElementById("old-password"), fresh = document.getElementById("new-password");
  const doneEl = document.getElementById("password-done");
  const button = document.getElementById("change-password");
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    doneEl.textContent = "";
    submitForm(button, document.getElementById("password-error"),
      () => api("POST", "/api/account/password", { old_password: old.value, new_password: fresh.value }),
      () => {
        old.value = "";
        fresh.value = "";
        doneEl.textContent = t("account.password_changed");
        button.disabled = false;
      });
  });
}

// The bots this account runs: each with its tokens (their first characters, when made and last used), a
// new token (shown here once: the server keeps only its hash) and a way to revoke one.
function tokenEl(bot, tok) {
  const state = tok.revoked ? t("account.token_revoked", { date: whenText(tok.revoked) })
    : tok.seen ? t("account.token_used", { date: whenText(tok.seen) }) : t("account.token_unused");
  return h("li", { class: "token" + (tok.revoked ? " revoked" : ""), "data-hint": tok.hint },
    h("code", {}, tok.hint + "…"), " ",
    h("span", { class: "meta" }, t("account.token_made", { date: whenText(tok.created) }) + " · " + state),
    tok.revoked ? null : h("button", { type: "button", class: "secondary", onclick: () => revokeToken(bot, tok.hint) },
      t("account.revoke")));
}

function botEl(bot) {
  return h("li", { class: "bot-entry", "data-bot": bot.name },
    h("div", { class: "bot-line" },
      h("a", { href: bot.url }, bot.name), " ", botBadge(), " ",
      h("span", { class: "bot-online" }, t(bot.online ? "bot.online" : "bot.offline"))),
    bot.tokens.length
      ? h("ul", { class: "token-list" }, ...bot.tokens.map((tok) => tokenEl(bot.name, tok)))
      : h("p", { class: "hint-text" }, t("account.no_tokens")),
    h("button", { type: "button", class: "secondary new-token", onclick: () => newToken(bot.name) }, t("account.new_token")));
}

async function showBots() {
  const list = document.getElementById("bot-list");
  try {
    const out = await api("GET", "/api/account/bots");
    if (!out.bots.length) fill(list, h("li", { class: "empty" }, t("account.no_bots")));
    else fill(list, ...out.bots.map(botEl));
  } catch (e) {
    document.getElementById("bots-error").textContent = errorText(e.code, e.message, e.params);
  }
}

async function newToken(name) {
  const errorEl = document.getElementById("bots-error");
  errorEl.textContent = "";
  try {
    const out = await api("POST", "/api/account/bots/" + encodeURIComponent(name) + "/tokens");
    document.getElementById("token-text").textContent = out.token;
    document.getElementById("token-box").hidden = false;
    await showBots();
  } catch (e) {
    errorEl.textContent = errorText(e.code, e.message, e.params);
  }
}

async function revokeToken(name, hint) {
  const errorEl = document.getElementById("bots-error");
  errorEl.textContent = "";
  try {
    await api("DELETE", "/api/account/bots/" + encodeURIComponent(name) + "/tokens/" + encodeURIComponent(hint));
    await showBots();
  } catch (e) {
    errorEl.textContent = errorText(e.code, e.message, e.params);
  }
}

function botForms() {
  const form = document.getElementById("bot-form");
  const input = document.getElementById("bot-name");
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    submitForm(document.getElementById("bot-create"), document.getElementById("bots-error"),
      () => api("POST", "/api/account/bots", { name: input.value.trim() }),
      async () => {
        input.value = "";
        document.getElementById("bot-create").disabled = false;
        await showBots();
      });
  });
  showBots();
}

document.addEventListener("DOMContentLoaded", () => {
  if (K.account) { accountForms(); botForms(); } else guestForms();
});
