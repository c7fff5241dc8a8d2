const os = require("os");
exports.handle = async (event, context) => {
  console.log(JSON.stringify({ level: "info", host: os.hostname(), fn: context.function, path: event.path }));
  return { ok: true };
};
