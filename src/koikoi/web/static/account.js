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
    errorEl.textContent = errorText(e.code, e.message);
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
  // "Member since": the date in the page's language (the server wrote it as YYYY-MM-DD).
  const since = document.getElementById("member-since");
  const created = new Date(since.dataset.created);
  if (!Number.isNaN(created.getTime())) {
    since.textContent = t("account.member_since", { date: created.toLocaleDateString(K.lang, { dateStyle: "long" }) });
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

document.addEventListener("DOMContentLoaded", () => {
  if (K.account) accountForms(); else guestForms();
});
