#!/usr/bin/env node
// The toolgate command: runs the compiled CLI (built by `npm ci` / `npm run build`).
import '../dist/cli/main.js';
