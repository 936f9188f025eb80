/**
 * How the CLI is run in what the project prints (the server's hints, the sign-in page): `npx`
 * finds the command in a clone and in a project that installed the package, whether or not
 * `fencegate` is on the PATH.
 */
export const CLI_COMMAND = 'npx fencegate';
