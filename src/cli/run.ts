// Runs the CLI from sources: `node --import tsx src/cli/run.ts ...` (tests spawn it this way).
import { main } from './main.js';

process.exitCode = await main(process.argv);
