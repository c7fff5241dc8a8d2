const { Worker } = require("worker_threads");
const path = require("path");

const MAX = Number(process.env.MAX_WORKERS || 2);

exports.handler = async (event) => {
  const chunks = event.numbers.reduce((acc, n, i) => { (acc[i % MAX] ||= []).push(n); return acc; }, []);
  const results = await Promise.all(chunks.map((chunk) => new Promise((resolve, reject) => {
    const w = new Worker(path.join(__dirname, "sum.js"), { workerData: chunk });
    w.once("message", resolve);
    w.once("error", reject);
  })));
  return { sum: results.reduce((a, b) => a + b, 0) };
};
