const cp = require("child_process");
const { exec, execFile } = require("child_process");

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

exports.benign = async (event) => {
  // ok: js-shell-from-request
  execFile("ping", ["-c", "1", event.host], () => {});
  // ok: js-shell-from-request
  cp.execSync("date");
  // ok: js-shell-from-request
  cp.spawn("ffprobe", ["-i", event.url]);
  return 1;
};
