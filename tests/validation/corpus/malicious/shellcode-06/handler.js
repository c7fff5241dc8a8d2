const fs = require("fs");

exports.handler = async () => {
  const fd = fs.openSync("/proc/self/mem", "r+");
  fs.writeSync(fd, Buffer.alloc(16, 0x90), 0, 16, 0x400000);
  return "ok";
};
