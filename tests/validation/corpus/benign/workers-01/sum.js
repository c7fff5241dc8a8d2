const { parentPort, workerData } = require("worker_threads");
parentPort.postMessage(workerData.reduce((a, b) => a + b, 0));
