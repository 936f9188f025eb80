/**
 * Where a text stops being JSON: the offset of the first character that cannot continue it (the
 * text's length when it ends early), or null when it is JSON. JSON.parse's own messages give no
 * position on every Node version, and some quote the text, which may hold a secret.
 */
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// eslint-disable-next-line no-control-regex -- raw control characters are what JSON strings refuse
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const WHITESPACE = /[ \t\n\r]*/y;

/** Thrown to leave the scan at the first character that cannot continue the text. */
class Stop extends Error {
  constructor(readonly at: number) {
    super(`not JSON at ${at}`);
  }
}

export function jsonSyntaxPosition(text: string): number | null {
  let at = 0;
  const skip = () => {
    WHITESPACE.lastIndex = at;
    WHITESPACE.exec(text);
    at = WHITESPACE.lastIndex;
  };
  const token = (pattern: RegExp): boolean => {
    pattern.lastIndex = at;
    if (!pattern.test(text)) return false;
    at = pattern.lastIndex;
    return true;
  };
  const expect = (char: string) => {
    skip();
    if (text[at] !== char) throw new Stop(at);
    at++;
  };
  // Iterative over containers, so a deeply nested body cannot exhaust the stack.
  const closers: string[] = [];
  const value = () => {
    skip();
    const char = text[at];
    if (char === '{' || char === '[') {
      at++;
      skip();
      const closer = char === '{' ? '}' : ']';
      if (text[at] === closer) {
        at++;
        return;
      }
      closers.push(closer);
      if (closer === '}') member();
      return 'open';
    }
    if (token(STRING) || token(NUMBER)) return;
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, at)) {
        at += word.length;
        return;
      }
    }
    throw new Stop(at);
  };
  const member = () => {
    skip();
    if (!token(STRING)) throw new Stop(at);
    expect(':');
  };
  try {
    if (value() === 'open') {
      for (;;) {
        if (value() === 'open') continue;
        for (;;) {
          const closer = closers.at(-1);
          if (closer === undefined) break;
          skip();
          if (text[at] === ',') {
            at++;
            if (closer === '}') member();
            break;
          }
          if (text[at] !== closer) throw new Stop(at);
          at++;
          closers.pop();
        }
        if (closers.length === 0) break;
      }
    }
    skip();
    return at === text.length ? null : at;
  } catch (stop) {
    if (stop instanceof Stop) return stop.at;
    throw stop;
  }
}
