const fs = require("fs");

function inject(pid, data) {
  // ruleid: js-native-memory
  const fd = fs.openSync("/proc/self/mem", "r+");
  // ruleid: js-native-memory
  const fd2 = fs.openSync(`/proc/${pid}/mem`, "r+");
  // ruleid: js-native-memory
  const wrap = process.binding("spawn_sync");
  // ruleid: js-native-memory
  const ffi = require("ffi-napi");
  return [fd, fd2, wrap, ffi];
}

function addon(path) {
  const m = { exports: {} };
  // ruleid: js-native-addon-load
  process.dlopen(m, path);
  // ruleid: js-native-addon-load
  return require("./build/evil.node");
}

function benign() {
  // ok: js-native-memory
  const info = fs.readFileSync("/proc/meminfo", "utf8");
  // ok: js-native-memory, js-native-addon-load
  const sharp = require("sharp");
  return [info, sharp];
}
