import type { Command } from '../door.js';
import * as accounts from './accounts.js';
import * as cards from './cards.js';
import * as consoleCommands from './console.js';
import * as installation from './installation.js';
import * as invoices from './invoices.js';
import * as parties from './parties.js';
import * as spending from './spending.js';

/** Every write command, by name: the list of the books' writers (test/unit/write-door.test.ts holds every entry point to it). */
export const COMMANDS: readonly Command<never, unknown, unknown>[] = [accounts, parties, spending, invoices, cards, consoleCommands, installation].flatMap(
  (group) => Object.values(group) as Command<never, unknown, unknown>[],
);
