/** The dashboard's pages: the frame, sign-in, the panels of one tenant, one scope. */
import { CLI_COMMAND } from '../cli-command.js';
import { html, withQuery, type Html } from './html.js';
import type { ScopesQuery } from './panels/scopes.js';

export const ASSET_VERSION = '2';

function frame(title: string, body: Html): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <title>${title}</title>
        <link rel="stylesheet" href="/ui/assets/dashboard.css?v=${ASSET_VERSION}" />
        <script src="/ui/assets/dashboard.js?v=${ASSET_VERSION}" defer></script>
      </head>
      <body>
        ${body}
      </body>
    </html>`;
}

/** `message`: why the last attempt failed, shown as text. */
export function signInPage(message: string | null): Html {
  return frame(
    'fencegate — sign in',
    html`<main class="sign-in">
      <h1>fencegate</h1>
      <form method="post" action="/ui/sign-in" autocomplete="off">
        <label for="token">Operator token</label>
        <input id="token" name="token" type="password" required spellcheck="false" autofocus />
        <button type="submit">Sign in</button>
      </form>
      ${message === null ? null : html`<p class="error" role="alert">${message}</p>`}
      <p class="muted">
        Paste an operator token of your tenant. It is sent once; the dashboard keeps a session
        cookie, never the token. To make one, with this server's store:
      </p>
      <pre
        class="muted"
      ><code>${CLI_COMMAND} token create --tenant TENANT --role operator --store URL</code></pre>
    </main>`,
  );
}

function header(tenant: string): Html {
  return html`<header class="top">
    <h1>
      <a href="/ui">fencegate</a> <span class="tenant">tenant <b>${tenant}</b></span>
    </h1>
    <form method="post" action="/ui/sign-out">
      <button type="submit" id="sign-out">Sign out</button>
    </form>
  </header>`;
}

export interface PanelSpec {
  name: string;
  title: string;
  /** The fragment URL the page polls. */
  src: string;
  /** Poll interval in ms. */
  every: number;
  body: Html;
}

function panel(spec: PanelSpec): Html {
  return html`<section
    class="panel"
    id="panel-${spec.name}"
    data-src="${spec.src}"
    data-every="${spec.every}"
  >
    <h2>${spec.title} <span class="panel-status muted"></span></h2>
    <div class="panel-error"></div>
    <div class="panel-body">${spec.body}</div>
  </section>`;
}

export function dashboardPage(tenant: string, scopes: ScopesQuery, panels: PanelSpec[]): Html {
  return frame(
    `fencegate — ${tenant}`,
    html`${header(tenant)}
      <main class="dashboard">
        <form class="filter" method="get" action="/ui">
          <label for="prefix">Scopes starting with</label>
          <input id="prefix" name="prefix" value="${scopes.prefix ?? ''}" spellcheck="false" />
          <button type="submit">Filter</button>
          ${scopes.prefix === undefined && scopes.cursor === undefined ? null : html`<a href="${withQuery('/ui', {})}">clear</a>`}
        </form>
        ${panels.map(panel)}
      </main>`,
  );
}

export function scopePage(tenant: string, name: string, body: Html): Html {
  return frame(
    `fencegate — ${name}`,
    html`${header(tenant)}
      <main class="dashboard">
        <p><a href="/ui">← all scopes</a></p>
        <section class="panel">
          <h2>Scope <span class="name">${name}</span></h2>
          ${body}
        </section>
      </main>`,
  );
}

export function errorFragment(code: string, message: string): Html {
  return html`<p class="error"><b>${code}</b>: ${message}</p>`;
}

export function errorPage(code: string, message: string): Html {
  return frame(
    'fencegate — not available',
    html`<main class="sign-in">
      ${errorFragment(code, message)}
      <p><a href="/ui">try again</a></p>
    </main>`,
  );
}
