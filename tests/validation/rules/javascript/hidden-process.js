const cp = require("child_process");
const { spawn } = require("child_process");

function detach() {
  // ruleid: js-detached-process, js-hidden-output-process
  cp.spawn("/tmp/.x/kworker", [], { detached: true, stdio: "ignore" }).unref();
  // ruleid: js-hidden-output-process
  const c = cp.spawn("./miner", ["-o", "pool"], { stdio: "ignore" });
  // ruleid: js-detached-process, js-hidden-output-process
  c.unref();
  // ruleid: js-detached-process
  cp.exec("nohup ./agent >/dev/null 2>&1 &");
}

function hidden() {
  // ruleid: js-hidden-output-process
  return cp.spawn("./helper", [], { stdio: "ignore" });
}

function benign(file) {
  // ok: js-detached-process, js-hidden-output-process
  const out = cp.execFileSync("ffmpeg", ["-i", file, "/tmp/out.mp3"]);
  // ok: js-detached-process, js-hidden-output-process
  const p = cp.spawn("gzip", [file], { stdio: "inherit" });
  // ok: js-detached-process
  const note = "runs in the background";
  // ok: js-hidden-output-process
  const timer = setInterval(() => {}, 1000);
  timer.unref();
  return [out, p, note];
}
