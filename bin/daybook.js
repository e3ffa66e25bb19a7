#!/usr/bin/env node
// The installed command runs the compiled CLI; `npm ci` builds it through the prepare script.
import { main } from '../dist/src/cli/main.js';

process.exitCode = await main(process.argv);
