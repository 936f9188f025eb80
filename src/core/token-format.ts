/** What a token fencegate makes (worker, operator, first-run admin) looks like: fg_ and base64url. */
export const TOKEN_PREFIX = 'fg_';

export const TOKEN_PATTERN = /^fg_[A-Za-z0-9_-]+$/;

export const TOKEN_RULE = 'fg_ followed by letters, digits, _ and -';
