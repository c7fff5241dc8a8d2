'use strict';
// Detonation harness (issue 29): load a function once and call it, recording what it does.
//
// Not the serving runtime (server.js is unchanged): this runs only at upload validation,
// inside the same sandbox, in a network namespace that leads to a recording sink
// (sless/validation/sink.py). It writes the canary credential files it is given under
// $HOME, wraps child_process and fs (processes, credential reads, writes) and records them
// as JSON lines on fd 1 (the function's console output goes to stderr), shifts the clock
// (Date, per call) and calls the handler with a GET, a JSON POST and a cron tick at now, the
// next weekday, a month ahead and a year ahead, all twelve at once, within DETONATION_BUDGET_S. The network itself
// is recorded by the sink, not here. The trace is evidence, not the last word: code that
// runs can add fake lines (more findings) or break the hooks (the sink's record remains).

const fs = require('fs');
const path = require('path');
const childProcess = require('child_process');

const realNow = Date.now;
// the run's nonce, the one line on stdin, read before the code loads (which can then read
// only the end of the stream): `done` carries it, so a `done` line the code writes on the
// trace does not finish the run
const nonce = (() => {
  const buf = Buffer.alloc(256);
  let got = 0;
  try {
    for (let n; got < 256 && (n = fs.readSync(0, buf, got, 256 - got, null)) > 0; ) {
      got += n;
      if (buf.subarray(0, got).includes(10)) break;
    }
  } catch (e) {}
  return buf.subarray(0, got).toString().trim();
})();
// taken before anything below or the code wraps them
const readdirSync = fs.readdirSync;
const readFileSync = fs.readFileSync;

// How long the code may run: DETONATION_BUDGET_S seconds of the time it had, within
// DETONATION_CEILING_S seconds of wall-clock time. The time it had is wall-clock time minus
// the time the process's threads waited for a CPU (the kernel's run-queue wait,
// /proc/self/task/*/schedstat, summed per interval and capped at it), so that a loaded
// machine gives the code the same run as a quiet one: a late leak is seen and a slow import
// finishes whatever else the machine does. Sleeping and waiting for the network count, as on
// a quiet machine; code that makes itself wait only stretches its run up to the ceiling.
// Without schedstat the budget is wall-clock time.
function runQueueWaits() {
  const waits = new Map();
  let tids = [];
  try {
    tids = readdirSync('/proc/self/task');
  } catch (e) {
    return waits;
  }
  for (const tid of tids) {
    try {
      const ns = Number(String(readFileSync(`/proc/self/task/${tid}/schedstat`)).split(' ')[1]);
      if (Number.isFinite(ns)) waits.set(tid, ns);
    } catch (e) {}
  }
  return waits;
}
const budget = {
  seconds: Number(process.env.DETONATION_BUDGET_S || '1.5'),
  ceiling: Number(process.env.DETONATION_CEILING_S || '5'),
  started: realNow(),
  polled: realNow(),
  lost: 0,
  waits: runQueueWaits(),
};
delete process.env.DETONATION_BUDGET_S;
delete process.env.DETONATION_CEILING_S;
const POLL_MS = 20;

// milliseconds left (<= 0: the budget is spent)
function budgetLeft() {
  const now = realNow();
  const waits = runQueueWaits();
  let grown = 0;
  for (const [tid, ns] of waits) grown += Math.max(0, ns - (budget.waits.get(tid) || 0));
  budget.lost += Math.min(grown / 1e6, Math.max(0, now - budget.polled));
  budget.waits = waits;
  budget.polled = now;
  const had = now - budget.started - budget.lost;
  return Math.min(1000 * budget.seconds - had, budget.started + 1000 * budget.ceiling - now);
}
const home = process.env.HOME || '/tmp';
const files = JSON.parse(process.env.DETONATION_FILES || '{}');
delete process.env.DETONATION_FILES;
for (const [rel, content] of Object.entries(files)) {
  const p = path.join(home, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
}
const credPaths = Object.keys(files).map((rel) => path.join(home, rel));
const seen = new Set();
const writeSync = fs.writeSync;

function emit(kind, fields) {
  const line = JSON.stringify({ kind, ...fields }).slice(0, 2000);
  if (seen.has(line) || seen.size > 500) return;
  seen.add(line);
  try {
    writeSync(1, line + '\n');
  } catch (e) {}
}

for (const name of ['log', 'info', 'debug']) console[name] = console.error;

function wrap(obj, name, check) {
  const real = obj[name];
  if (typeof real !== 'function') return;
  obj[name] = function (...args) {
    try {
      check(...args);
    } catch (e) {}
    return real.apply(this, args);
  };
}

// the program, its arguments, and whether it runs through a shell or detached
function processEvent(name, cmd, a, b) {
  const args = Array.isArray(a) ? a.map((x) => String(x).slice(0, 100)).slice(0, 20) : [];
  const raw = Array.isArray(a) ? b : a;
  const opts = raw && typeof raw === 'object' ? raw : {};
  const fork = name === 'fork';
  return {
    event: `child_process.${name}`,
    argv: JSON.stringify([cmd, a]).slice(0, 400),
    program: fork ? process.execPath : String(cmd === undefined || cmd === null ? '' : cmd).slice(0, 300),
    args: fork ? ['node', String(cmd).slice(0, 300), ...args] : [String(cmd).slice(0, 100), ...args],
    cwd: String(opts.cwd || process.cwd()).slice(0, 300),
    shell: name === 'exec' || name === 'execSync' || Boolean(opts.shell),
    detached: Boolean(opts.detached),
  };
}

for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
  wrap(childProcess, name, (cmd, a, b) => emit('process', processEvent(name, cmd, a, b)));
}

function resolved(p) {
  if (typeof p !== 'string' && !(p instanceof URL) && !Buffer.isBuffer(p)) return null;
  return path.resolve(String(p instanceof URL ? p.pathname : p));
}

function onRead(p) {
  const r = resolved(p);
  if (r && credPaths.includes(r)) emit('credential_read', { path: r });
}

function onWrite(p) {
  const r = resolved(p);
  if (r) emit('file_write', { path: r });
}

function onOpen(p, flags) {
  if (typeof flags === 'string' && /[wa+]/.test(flags)) onWrite(p);
  else if (typeof flags === 'number' && flags & (fs.constants.O_WRONLY | fs.constants.O_RDWR | fs.constants.O_CREAT)) onWrite(p);
  else onRead(p);
}

for (const name of ['readFileSync', 'readFile', 'createReadStream']) wrap(fs, name, onRead);
for (const name of ['writeFileSync', 'writeFile', 'appendFileSync', 'appendFile', 'createWriteStream', 'copyFileSync', 'renameSync', 'symlinkSync', 'chmodSync']) {
  wrap(fs, name, (a, b) => onWrite(['copyFileSync', 'renameSync', 'symlinkSync'].includes(name) ? b : a));
}
for (const name of ['openSync', 'open']) wrap(fs, name, onOpen);
for (const name of ['readFile', 'open']) wrap(fs.promises, name, name === 'open' ? onOpen : onRead);
for (const name of ['writeFile', 'appendFile']) wrap(fs.promises, name, onWrite);

// each call carries its own clock offset (AsyncLocalStorage), so that the calls run at once
const { AsyncLocalStorage } = require('async_hooks');
const clock = new AsyncLocalStorage();
const shifted = () => realNow() + (clock.getStore() || 0);
const RealDate = Date;
class ShiftedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(shifted());
    else super(...args);
  }
  static now() {
    return shifted();
  }
}
globalThis.Date = ShiftedDate;

const headers = { 'content-type': 'application/json', 'user-agent': 'curl/8.5.0' };
const events = [
  { method: 'GET', path: '/', query: {}, multiQuery: {}, headers, body: null, isBase64Encoded: false },
  { method: 'POST', path: '/', query: {}, multiQuery: {}, headers, body: { id: 1, items: [1, 2], title: 'test' }, isBase64Encoded: false },
  { source: 'cron', schedule: '*/5 * * * *', time: '' },
];

function offsets() {
  const day = 86400000;
  let toWeekday = 1;
  while ([0, 6].includes(new RealDate(realNow() + toWeekday * day).getDay())) toWeekday += 1;
  return [0, toWeekday * day, 31 * day, 366 * day];
}

// An object whose unknown methods answer it again: a peer's context API (OpenFaaS's
// context.status(200).headers({}).succeed(x), Knative's context.log.info(...)) goes on to
// the code after it instead of stopping the call with a TypeError.
function chainable(base) {
  const proxy = new Proxy(base, {
    get(target, key) {
      if (key in target || typeof key === 'symbol' || key === 'then') return target[key];
      return () => proxy;
    },
  });
  return proxy;
}

const context = chainable({
  function: process.env.SLESS_FUNCTION || 'fn',
  namespace: process.env.SLESS_NAMESPACE || 'default',
  invocationId: 'detonation',
  remainingTime: () => 1,
  log: chainable({}),
});

// how the spec's interface calls the code: Knative's handle(context, body) gets the
// request as its context; the others are (event, context)
const iface = process.env.DETONATION_INTERFACE || 'sless';
delete process.env.DETONATION_INTERFACE;
function call(func, event) {
  if (iface === 'knative') {
    return func(chainable({ ...event, log: chainable({}) }), event.body);
  }
  return func(event, context);
}

// resolves with { value } when the promise settles, or with nothing when the budget is spent
// first; it does not keep the process alive (unref: with nothing else left, beforeExit)
function within(promise) {
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (budgetLeft() <= 0) {
        clearInterval(timer);
        resolve(undefined);
      }
    }, POLL_MS).unref();
    promise.then(
      (value) => {
        clearInterval(timer);
        resolve({ value });
      },
      (error) => {
        clearInterval(timer);
        reject(error);
      },
    );
  });
}

// A package the upload needs but does not ship is a stand-in: its dependencies are installed
// after validation, so without this the require of any of them throws, the handler is never
// called and the detonation sees nothing of it. Anything asked of a stand-in is another one
// (callable, constructible, extendable; a decorator keeps the function it wraps), so the code
// goes on to what it does with Node's own modules. ESM imports are not covered.
const Module = require('module');
const builtins = new Set(Module.builtinModules);
function standIn(name) {
  const target = function () {};
  const proxy = new Proxy(target, {
    get(t, key) {
      if (key === Symbol.toPrimitive) return () => '';
      if (key === Symbol.iterator) return function* () {};
      if (key === 'then' || key === '__esModule' || typeof key === 'symbol') return undefined;
      if (key === 'prototype') return t.prototype;
      return standIn(`${name}.${key}`);
    },
    apply(t, self, args) {
      return args.length === 1 && typeof args[0] === 'function' ? args[0] : proxy;
    },
    construct() {
      return proxy;
    },
  });
  return proxy;
}
const realLoad = Module._load;
Module._load = function (request, ...rest) {
  try {
    return realLoad.call(this, request, ...rest);
  } catch (e) {
    const bare = typeof request === 'string' && !/^[./]/.test(request) && !request.startsWith('node:');
    const missing = e && e.code === 'MODULE_NOT_FOUND' && String(e.message).includes(`'${request}'`);
    if (!bare || !missing || builtins.has(request)) throw e;
    emit('stand_in', { module: request.slice(0, 200) });
    return standIn(request);
  }
};

async function load() {
  const entry = process.env.SLESS_ENTRYPOINT || 'handler.handle';
  const dot = entry.lastIndexOf('.');
  const base = path.join(process.env.SLESS_CODE_DIR || '/code', entry.slice(0, dot));
  const file = ['.js', '.cjs', '.mjs', '/index.js'].map((e) => base + e).find((f) => fs.existsSync(f));
  if (!file) return undefined;
  let mod;
  try {
    mod = require(file);
  } catch (err) {
    if (err && err.code === 'ERR_REQUIRE_ESM') mod = await import(require('url').pathToFileURL(file).href);
    else throw err;
  }
  let func = mod ? mod[entry.slice(dot + 1)] : undefined;
  if (func === undefined && mod && mod.default) func = mod.default[entry.slice(dot + 1)];
  return typeof func === 'function' ? func : undefined;
}

let finished = false;
function finish() {
  if (finished) return;
  finished = true;
  // written directly, not through emit: its cap and dedup are the code's to fill
  try {
    writeSync(1, JSON.stringify({ kind: 'done', nonce, budget_left: budgetLeft() / 1000 }) + '\n');
  } catch (e) {}
  process.exit(0);
}

async function main() {
  // nothing left to run (the calls' promises can never settle): the detonation is over
  process.on('beforeExit', finish);
  process.on('uncaughtException', (e) => emit('error', { type: String(e && e.name) }));
  process.on('unhandledRejection', (e) => emit('error', { type: String(e && e.name) }));
  let func;
  try {
    const loaded = await within(load());
    if (loaded === undefined) {
      // the code was never called: what it does when called was not seen, so this run
      // does not count as finished (detonation-incomplete)
      emit('unfinished', { at: 'import' });
      process.exit(0);
    }
    func = loaded.value;
  } catch (e) {
    emit('error', { type: String(e && e.name), at: 'import' });
  }
  if (func) {
    const calls = [];
    for (const off of offsets()) {
      for (const event of events) {
        calls.push(clock.run(off, () => Promise.resolve().then(() => call(func, event))
          .catch((e) => emit('error', { type: String(e && e.name) }))));
      }
    }
    await within(Promise.all(calls));
  }
  // what the calls left running (a request sent without waiting for it) runs on until it
  // ends (beforeExit) or the budget does: returning early hides nothing
  const timer = setInterval(() => {
    if (budgetLeft() <= 0) {
      clearInterval(timer);
      finish();
    }
  }, POLL_MS).unref();
}

main();
