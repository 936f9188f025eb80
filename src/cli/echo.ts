/**
 * What the CLI quotes back of what it was given. A value typed by mistake can be a megabyte long
 * (a whole file in --write): it comes back as a short prefix and its length, never whole.
 */
const MAX_ECHOED = 60;
const PREFIX_LENGTH = 40;

export function quoted(text: string): string {
  if (text.length <= MAX_ECHOED) return `"${text}"`;
  return `"${text.slice(0, PREFIX_LENGTH)}…" (${text.length} characters)`;
}
