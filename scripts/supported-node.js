'use strict';
// Runs a development command (`npm start`, `npm test`, ...: package.json's scripts) on a Node.js line
// that package.json's `engines` admits. On such a line the command runs on it. On any other (the
// default Node.js of many machines is still 20, past its end of life, on which the SQLite driver
// crashes), it runs on the newest supported line, installed from the npm registry's `node` package
// by scripts/node-line.sh into a cache folder the first time and reused after. Where none can be
// had, it says so and exits with 1. Plain CommonJS without recent syntax, so that an old Node.js
// gets the message too.
//
// Usage: node scripts/supported-node.js <command> [args...]

const childProcess = require('child_process');
const path = require('path');
const semver = require('semver');
const engines = require('../package.json').engines.node;

const NODE_LINE = path.join(__dirname, 'node-line.sh');

/** The majors a range such as `engines` admits, newest first: [26, 24, 22]. */
const supportedLines = (range) =>
  range
    .split('||')
    .map((part) => semver.minVersion(part.trim()).major)
    .sort((a, b) => b - a);

/** "22, 24 or 26". */
const listed = (lines) => {
  const up = lines.slice().reverse();
  return up.length > 1 ? `${up.slice(0, -1).join(', ')} or ${up[up.length - 1]}` : String(up[0]);
};

/** The folder of a supported Node.js (bin/node, include/node), installed when missing; throws why not. */
function supportedHome(line) {
  const env = Object.assign({}, process.env, {
    // Offline or refused: say so in seconds, not after npm's minute of retries.
    npm_config_fetch_retries: '1',
    npm_config_fetch_retry_mintimeout: '1000',
    npm_config_fetch_retry_maxtimeout: '2000',
  });
  const result = childProcess.spawnSync('bash', [NODE_LINE, String(line)], { env, encoding: 'utf8' });
  if (result.status === 0) return result.stdout.trim();
  if (result.error) throw result.error;
  // npm's own account of the failure, such as "FetchError: request to ... failed, reason: ...".
  const lines = result.stderr.split('\n');
  const why = lines.find((line) => /^npm error (?!code |syscall |errno )\S/.test(line)) || lines.filter(Boolean).pop();
  throw new Error(why ? why.replace(/^npm error /, '') : `scripts/node-line.sh exited with ${result.status}`);
}

/** Runs the command to its end, passing signals on to it, and exits as it did. */
function run(command, args, env) {
  const child = childProcess.spawn(command, args, { stdio: 'inherit', env });
  const forward = (signal) => child.kill(signal);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, forward);
  child.on('error', (error) => {
    console.error(`Could not run ${command}: ${error.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
    process.exit(code === null ? 1 : code);
  });
}

function main(argv) {
  if (argv.length === 0) {
    console.error('Usage: node scripts/supported-node.js <command> [args...]');
    process.exit(2);
  }
  if (semver.satisfies(process.version, engines)) return run(argv[0], argv.slice(1), process.env);

  const lines = supportedLines(engines);
  const running = `Node.js ${process.version} (${process.execPath})`;
  let home;
  try {
    home = supportedHome(lines[0]);
  } catch (error) {
    console.error(
      `Plant Store runs on Node.js ${listed(lines)} (package.json engines: ${engines}); this is ${running}.\n` +
        `No supported Node.js could be installed from the npm registry's node package: ${error.message}\n` +
        `Install Node.js ${listed(lines)} and run the command again.`,
    );
    process.exit(1);
  }
  const bin = path.join(home, 'bin');
  const node = path.join(bin, 'node');
  const version = childProcess.execFileSync(node, ['-p', 'process.version'], { encoding: 'utf8' }).trim();
  console.error(
    `${running} is outside engines (${engines}): running \`${argv.join(' ')}\` on Node.js ${version} from ${home}. ` +
      `To run other commands on it: export PATH="${bin}:$PATH"`,
  );
  // Every `node` the command starts (scripts run through `#!/usr/bin/env node`, npm's own) is that
  // one, and a native module built meanwhile is built against its headers, not the machine's.
  const env = Object.assign({}, process.env, {
    PATH: `${bin}${path.delimiter}${process.env.PATH}`,
    npm_config_nodedir: home,
    npm_node_execpath: node,
    NODE: node,
  });
  run(argv[0], argv.slice(1), env);
}

main(process.argv.slice(2));
