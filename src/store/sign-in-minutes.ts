/**
 * How long a console sign-in link works, in minutes: by default, and at most (a day). Apart
 * from console-sessions.ts so `daybook console link --help` states them without loading the
 * database driver.
 */
export const SIGN_IN_DEFAULT_MINUTES = 15;
export const SIGN_IN_MAX_MINUTES = 24 * 60;
