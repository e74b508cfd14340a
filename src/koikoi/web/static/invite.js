// Accept an invitation: take the friend's seat, then go to the table.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const name = document.getElementById("name");
  name.value = K.account || localStorage.getItem("koikoi.name") || "";  // a signed-in player's, their account's
  document.getElementById("join").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (!K.account) localStorage.setItem("koikoi.name", name.value.trim());
    try {
      const res = await api("POST", `/api/invite/${K.token}/join`, { name: name.value.trim() });
      window.location.href = res.url;
    } catch (e) {
      document.getElementById("form-error").textContent = errorText(e.code, e.message);
    }
  });
});
