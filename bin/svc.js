#!/usr/bin/env node
// The `svc` command: the compiled CLI (npm run build writes dist/).
import '../dist/cli/main.js';
