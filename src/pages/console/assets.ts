import { createHash } from 'node:crypto';

/**
 * The console's stylesheet and script, served from /console/assets/ (the policy allows only
 * 'self'). The script adds keyboard use to the review queue and a copy button to a new key;
 * every page works without it.
 */

export const CONSOLE_CSS = `
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f5f5f2;color:#1d1d1b;line-height:1.5}
.top{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center;padding:.75rem 1.5rem;background:#1f3f5f;color:#fff}
.top a,.top .link{color:#fff}
.top .account{margin:0;font-weight:600}
.top nav ul{display:flex;flex-wrap:wrap;gap:1rem;list-style:none;margin:0;padding:0}
.top a[aria-current=page]{font-weight:700;text-decoration-thickness:3px}
.sign-out{margin-left:auto}
main{max-width:64rem;margin:1.5rem auto;background:#fff;padding:1.5rem 2rem;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.5rem;margin:0 0 1rem}
h2{font-size:1.125rem;margin:1.5rem 0 .5rem}
table{width:100%;border-collapse:collapse;margin:1rem 0}
th,td{text-align:left;padding:.5rem .5rem .5rem 0;border-bottom:1px solid #e2e2dc;vertical-align:top}
td{overflow-wrap:anywhere}
td.num,th.num{text-align:right;white-space:nowrap}
.muted{color:#5c5c57}
.notice{padding:.75rem 1rem;border-radius:6px;margin:1rem 0}
.notice.ok{background:#eef4ee}
.notice.problem{background:#f6e9e7}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input[type=text],input[type=date],select{font:inherit;padding:.4rem .5rem;border:1px solid #8a8a84;border-radius:4px;min-width:16rem;max-width:100%}
fieldset{border:1px solid #e2e2dc;border-radius:6px;margin:.75rem 0;padding:.5rem 1rem}
button{font:inherit;font-weight:600;padding:.5rem 1rem;border:0;border-radius:6px;background:#1f5f3f;color:#fff;cursor:pointer}
button.danger{background:#8a1f1f}
button.link{background:none;padding:0;text-decoration:underline;font-weight:400}
button:focus-visible,a:focus-visible,input:focus-visible,select:focus-visible,tr:focus-visible{outline:3px solid #1d1d1b;outline-offset:2px}
.secret{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:1rem;background:#f5f5f2;padding:.75rem;border-radius:6px;overflow-wrap:anywhere}
.filters{display:flex;flex-wrap:wrap;gap:0 1rem;align-items:flex-end}
.inline{display:inline}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
tr.current{background:#eef2f6}
.severity{font-weight:600;text-transform:capitalize}
.headline{font-size:1.125rem;font-weight:600}
.signals>li{margin-bottom:1rem}
.signals p{margin:.25rem 0}
.accept select{min-width:10rem;width:100%}
.accept button{margin-top:.25rem}
td.date{white-space:nowrap;overflow-wrap:normal}
kbd{font-family:ui-monospace,Menlo,Consolas,monospace;border:1px solid #8a8a84;border-radius:3px;padding:0 .25rem}
details pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:.875rem;background:#f5f5f2;padding:.5rem;border-radius:4px;margin:.25rem 0 0}
@media (max-width:40rem){main{margin:0;padding:1rem;border-radius:0;box-shadow:none}.top{padding:.75rem 1rem}table{font-size:.9375rem}}
`;

export const CONSOLE_JS = `"use strict";
(function () {
  // A new key's copy button: copies the value shown once.
  document.querySelectorAll("[data-copy]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      var target = document.getElementById(button.getAttribute("data-copy"));
      if (!target || !navigator.clipboard) return;
      navigator.clipboard.writeText(target.textContent.trim()).then(function () {
        button.textContent = "Copied";
      });
    });
  });
  // The review queue: j and k move between items, a accepts the proposal, e chooses an account.
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr[data-item]"));
  if (rows.length === 0) return;
  var current = 0;
  function show(index) {
    rows[current].classList.remove("current");
    current = Math.max(0, Math.min(rows.length - 1, index));
    rows[current].classList.add("current");
    rows[current].focus();
  }
  rows.forEach(function (row) { row.tabIndex = -1; });
  show(0);
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    var tag = event.target && event.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    var row = rows[current];
    if (event.key === "j") { show(current + 1); event.preventDefault(); }
    else if (event.key === "k") { show(current - 1); event.preventDefault(); }
    else if (event.key === "a") {
      var accept = row.querySelector("form.accept button");
      if (accept) { accept.click(); event.preventDefault(); }
    } else if (event.key === "e") {
      var choose = row.querySelector("select");
      if (choose) { choose.focus(); event.preventDefault(); }
    }
  });
})();
`;

/**
 * The console's icon, named by every page: without one the browser asks for /favicon.ico, which
 * Daybook does not serve (a 404 and a console error on every visit), and an inline `data:` icon
 * is refused by the policy (img-src 'self').
 */
export const CONSOLE_ICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1f3f5f"/></svg>';

const etagOf = (body: string) => `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`;

/** Each asset's strong validator, so a browser may keep it and ask whether it changed. */
export const ASSET_ETAGS = {
  css: etagOf(CONSOLE_CSS),
  js: etagOf(CONSOLE_JS),
  icon: etagOf(CONSOLE_ICON),
};
