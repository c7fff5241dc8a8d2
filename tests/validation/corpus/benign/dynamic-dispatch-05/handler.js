const path = require("path");

const ACTIONS = new Set(["resize", "stats"]);

exports.handler = async (event) => {
  if (!ACTIONS.has(event.action)) return { error: `unknown action ${event.action}` };
  const mod = require(path.join(__dirname, "actions", `${event.action}.js`));
  return mod.run(event.args || {});
};
