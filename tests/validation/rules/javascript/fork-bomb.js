const cp = require("child_process");
const cluster = require("cluster");
const { Worker } = require("worker_threads");

function bomb() {
  while (true) {
    // ruleid: js-fork-bomb
    cp.fork(__filename);
  }
}

function bomb2() {
  for (;;) {
    // ruleid: js-fork-bomb
    new Worker("./w.js");
  }
}

function bomb3() {
  setInterval(() => {
    // ruleid: js-fork-bomb
    cluster.fork();
  }, 1);
}

function respawn() {
  // ruleid: js-fork-bomb
  cp.spawn(process.execPath, [__filename], { stdio: "inherit" });
}

function recurse() {
  // ruleid: js-fork-bomb
  cp.exec("node -e 1");
  recurse();
}

function benign(jobs) {
  // ok: js-fork-bomb
  const workers = jobs.slice(0, 4).map((j) => new Worker("./worker.js", { workerData: j }));
  for (const j of jobs) {
    // ok: js-fork-bomb
    cp.execFileSync("gzip", [j]);
  }
  return workers;
}
