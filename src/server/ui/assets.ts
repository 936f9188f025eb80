/**
 * The dashboard's only script and stylesheet, served from the package itself (no CDN, no build
 * step). The script polls each panel's fragment URL and swaps in the answer, parsed by DOMParser
 * (its scripts never run; the Content-Security-Policy allows only this file as script anyway).
 */

export const DASHBOARD_JS = `'use strict';
(function () {
  function refresh(panel) {
    var body = panel.querySelector('.panel-body');
    var error = panel.querySelector('.panel-error');
    var status = panel.querySelector('.panel-status');
    var every = Number(panel.getAttribute('data-every')) || 2000;
    function again() { window.setTimeout(load, every); }
    function fragment(text) {
      var doc = new DOMParser().parseFromString(text, 'text/html');
      return Array.prototype.slice.call(doc.body.childNodes);
    }
    function load() {
      fetch(panel.getAttribute('data-src'), {
        credentials: 'same-origin', cache: 'no-store', headers: { accept: 'text/html' }
      }).then(function (response) {
        if (response.status === 401) { window.location.assign('/ui'); return; }
        return response.text().then(function (text) {
          if (response.ok) {
            body.replaceChildren.apply(body, fragment(text));
            error.replaceChildren();
            status.textContent = 'updated ' + new Date().toISOString().slice(11, 19) + ' UTC';
          } else {
            error.replaceChildren.apply(error, fragment(text));
            status.textContent = 'not updated';
          }
          again();
        });
      }).catch(function () {
        status.textContent = 'server unreachable';
        again();
      });
    }
    again();
  }
  document.addEventListener('DOMContentLoaded', function () {
    document.querySelectorAll('[data-src]').forEach(refresh);
  });
})();
`;

export const DASHBOARD_CSS = `
:root { color-scheme: light; --line: #d8dde3; --muted: #6b7480; --ok: #137333; --bad: #b3261e; --warn: #9a6700; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, sans-serif; color: #1b1f24; background: #f6f7f9; }
a { color: #0b57d0; }
code { font: 12px ui-monospace, monospace; word-break: break-all; }
.top { display: flex; justify-content: space-between; align-items: center; padding: 8px 16px; background: #1b1f24; color: #fff; }
.top h1 { font-size: 18px; margin: 0; }
.top a { color: #fff; text-decoration: none; }
.tenant { font-weight: normal; font-size: 14px; margin-left: 12px; }
.dashboard { padding: 12px 16px; display: grid; gap: 12px; }
.panel { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; overflow-x: auto; }
.panel h2 { font-size: 15px; margin: 0 0 8px; }
.panel-status { font-size: 12px; font-weight: normal; margin-left: 8px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 12px; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.name { font-family: ui-monospace, monospace; word-break: break-all; }
.muted { color: var(--muted); }
.ok { color: var(--ok); }
.bad, .error { color: var(--bad); }
.warn { color: var(--warn); }
.status-unknown, .status-needs_attention, .status-deleted { color: var(--bad); font-weight: 600; }
.counts { list-style: none; display: flex; flex-wrap: wrap; gap: 12px; padding: 0; margin: 0 0 8px; }
.cutover { border-top: 1px solid var(--line); padding: 6px 0; }
.cutover progress { width: 240px; vertical-align: middle; }
.report { display: flex; gap: 24px; align-items: center; }
.report dl { display: grid; grid-template-columns: auto 1fr; gap: 2px 12px; margin: 0; }
.report dt, .facts dt { color: var(--muted); }
.report dd, .facts dd { margin: 0; }
.facts { display: grid; grid-template-columns: auto 1fr; gap: 2px 12px; }
.big { font-size: 40px; font-weight: 700; line-height: 1; margin-right: 6px; }
.stale-accepted, .verdict { display: flex; align-items: baseline; }
.summary { list-style: none; display: flex; flex-wrap: wrap; gap: 8px 28px; padding: 0; margin: 0; }
.summary li { display: flex; align-items: baseline; }
.filter { display: flex; gap: 8px; align-items: center; }
.chart { display: block; max-width: 100%; height: auto; }
.legend { list-style: none; display: flex; flex-wrap: wrap; gap: 4px 16px; padding: 0; margin: 4px 0 8px; font-size: 12px; }
.legend svg { vertical-align: -1px; margin-right: 4px; }
table.compact { width: auto; min-width: 320px; }
.rollout { border-top: 1px solid var(--line); padding: 6px 0; }
.rollout .facts { margin: 6px 0; }
.rollout-status { font-weight: 600; }
.rollout-status.status-running, .rollout-status.status-completed { color: var(--ok); }
.rollout-status.status-paused, .rollout-status.status-rolling_back { color: var(--warn); }
.rollout-status.status-rolled_back { color: var(--bad); }
.events { list-style: none; display: flex; flex-wrap: wrap; gap: 2px 16px; padding: 0; margin: 0 0 6px; font-size: 12px; color: var(--muted); }
.gates h3 { font-size: 13px; margin: 4px 0; color: var(--muted); }
.gate { display: flex; align-items: center; gap: 8px; }
.gate .chart { max-width: 80%; }
.gate-name { display: flex; flex-direction: column; gap: 2px; font-size: 12px; }
.sign-in { max-width: 420px; margin: 80px auto; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 16px 24px; }
.sign-in form { display: grid; gap: 8px; }
input { font: inherit; padding: 4px 6px; }
button { font: inherit; padding: 4px 12px; cursor: pointer; }
`;
