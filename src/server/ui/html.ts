/**
 * HTML built only through the `html` template: every interpolated value is escaped as text unless
 * it is already Html (built the same way). Scope names, holders, reasons, descriptions and payloads
 * come from callers and are shown, never interpreted.
 */

const HTML = Symbol('html');

export interface Html {
  readonly [HTML]: string;
}

/** What may go into a template: text (escaped), numbers, Html, lists of these; null shows nothing. */
export type HtmlValue = Html | string | number | null | undefined | false | readonly HtmlValue[];

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

export function escapeText(text: string): string {
  return text.replace(/[&<>"'`]/g, (char) => ESCAPES[char] ?? char);
}

function isHtml(value: unknown): value is Html {
  return typeof value === 'object' && value !== null && HTML in value;
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (isHtml(value)) return value[HTML];
  if (typeof value === 'string') return escapeText(value);
  if (typeof value === 'number') return String(value);
  return value.map(render).join('');
}

/** The only way to make Html: the literal parts are trusted markup, the values are not. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return { [HTML]: out };
}

export function toHtmlString(value: Html): string {
  return value[HTML];
}

/**
 * A name as one URL path segment. encodeURIComponent leaves `.` alone, and a URL parser resolves a
 * segment of `.` or `..` (also as `%2E`) away, so those names get no link at all: null.
 */
export function pathSegment(name: string): string | null {
  if (name === '.' || name === '..') return null;
  return encodeURIComponent(name);
}

/** A link to a page of the dashboard under `base` for a name, or the name as plain text. */
export function nameLink(base: string, name: string): Html {
  const segment = pathSegment(name);
  return segment === null
    ? html`<span>${name}</span>`
    : html`<a href="${base}/${segment}">${name}</a>`;
}

/** A dashboard URL with query parameters, each encoded. */
export function withQuery(path: string, params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== '') query.set(key, value);
  }
  const text = query.toString();
  return text === '' ? path : `${path}?${text}`;
}
