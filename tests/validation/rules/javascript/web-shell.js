const cp = require("child_process");
const { exec, execFile } = require("child_process");
const { execSync: runSync } = require("child_process");
const util = require("util");
const { promisify } = require("util");
import * as childProcess from "child_process";
import nodeCp from "node:child_process";
import { exec as shellOut } from "node:child_process";
const shell = require("shelljs");
const { exec: nodeExec } = require("node:child_process");

exports.handler = async (event) => {
  // ruleid: js-shell-from-request
  cp.execSync(event.cmd);
  // ruleid: js-shell-from-request
  exec(`ping -c 1 ${event.host}`, () => {});
  // ruleid: js-shell-from-request
  cp.spawn("sh", ["-c", event.query.q]);
  // ruleid: js-shell-from-request
  cp.spawn(event.bin, [], { shell: true });
  return "ok";
};

module.exports.view = (req, res) => {
  // ruleid: js-shell-from-request
  cp.exec("nslookup " + req.query.name, (e, out) => res.send(out));
};

// Every way of reaching child_process's exec/execSync.
exports.reach = async (event) => {
  // ruleid: js-shell-from-request
  runSync(event.a);
  // ruleid: js-shell-from-request
  require("child_process").exec(event.b);
  // ruleid: js-shell-from-request
  require("node:child_process").execSync(event.c);
  // ruleid: js-shell-from-request
  childProcess.exec(event.d);
  // ruleid: js-shell-from-request
  nodeCp.execSync(event.e);
  // ruleid: js-shell-from-request
  shellOut(event.f);
  const run = util.promisify(cp.exec);
  // ruleid: js-shell-from-request
  await run(event.g);
  const run2 = promisify(require("child_process").exec);
  // ruleid: js-shell-from-request
  await run2(event.h);
  const alias = cp.execSync;
  // ruleid: js-shell-from-request
  alias(event.i);
  // ruleid: js-shell-from-request
  cp["exec"](event.j);
  const dyn = await import("child_process");
  // ruleid: js-shell-from-request
  dyn.exec(event.k);
  // ruleid: js-shell-from-request
  process.mainModule.require("child_process").execSync(event.l);
  // ruleid: js-shell-from-request
  shell.exec(event.m);
  // ruleid: js-shell-from-request
  nodeExec(event.n);
  const { execSync: dynSync } = await import("node:child_process");
  // ruleid: js-shell-from-request
  dynSync(event.o);
  // ruleid: js-shell-from-request
  (await import("child_process")).exec(event.p);
  return 1;
};

exports.destructuredLate = (req, res) => {
  const { execSync } = cp;
  // ruleid: js-shell-from-request
  res.send(execSync(req.headers["x-cmd"]).toString());
};

exports.benign = async (event) => {
  // ok: js-shell-from-request
  execFile("ping", ["-c", "1", event.host], () => {});
  // ok: js-shell-from-request
  cp.execSync("date");
  // ok: js-shell-from-request
  cp.spawn("ffprobe", ["-i", event.url]);
  return 1;
};

// RegExp.prototype.exec, a database's exec and a query's exec run no command, even in a
// file that requires child_process.
exports.regexp = (req, res) => {
  // ok: js-shell-from-request
  const m = /^(\d+)-(\d+)$/.exec(req.query.range);
  const pattern = new RegExp("^[a-z]+$", "i");
  // ok: js-shell-from-request
  const n = pattern.exec(req.body);
  const re = /(\w+)=(\w+)/g;
  let kv;
  // ok: js-shell-from-request
  while ((kv = re.exec(req.query.q)) !== null) res.write(kv[1]);
  // ok: js-shell-from-request
  const o = new RegExp(req.query.p).exec(req.query.text);
  // ok: js-shell-from-request
  const p = RegExp.prototype.exec.call(pattern, req.body);
  res.json({ m, n, o, p });
};

exports.db = async (event, db, Model, redis) => {
  // ok: js-shell-from-request
  db.exec(event.sql);
  // ok: js-shell-from-request
  await Model.find({ name: event.name }).exec();
  // ok: js-shell-from-request
  await redis.multi().set("k", event.value).exec();
  // ok: js-shell-from-request
  db.prepare("SELECT 1").exec(event.args);
  return 1;
};

exports.localExec = async (event, pool) => {
  const exec = (sql) => pool.query(sql);
  // ok: js-shell-from-request
  await exec(event.query);
  return 1;
};
