#!/usr/bin/env node
'use strict';
// The CLI is TypeScript; tsx compiles it on the fly.
require('tsx/cjs');
const { runCli } = require('../cli/skillflow.ts');

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`skillflow: ${error && error.stack ? error.stack : String(error)}\n`);
    process.exitCode = 2;
  },
);
