const os = require("os");
exports.handle = async () => ({
  uptime: process.uptime(),
  memory: process.memoryUsage().rss,
  node: process.version,
  load: os.loadavg()[0],
});
