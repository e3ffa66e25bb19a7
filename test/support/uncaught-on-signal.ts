/**
 * Loaded with `--import` into a child process that a test wants to die of an uncaught error:
 * SIGUSR2 throws from a listener, where nothing catches it, as a bug in a timer would.
 */
process.on('SIGUSR2', () => {
  throw new Error('an uncaught error, as the test asked');
});
