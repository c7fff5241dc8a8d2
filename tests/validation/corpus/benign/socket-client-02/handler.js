const net = require("net");

exports.handler = async () =>
  new Promise((resolve) => {
    const socket = net.connect(Number(process.env.SMTP_PORT || 25), process.env.SMTP_HOST);
    socket.setTimeout(3000);
    socket.once("data", (d) => {
      socket.end("QUIT\r\n");
      resolve({ reachable: true, banner: d.toString().trim() });
    });
    socket.once("timeout", () => { socket.destroy(); resolve({ reachable: false }); });
    socket.once("error", () => resolve({ reachable: false }));
  });
