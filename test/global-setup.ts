/** Runs once before the test files: services the suites need are found or started here. */
export default function setup(): void {}
