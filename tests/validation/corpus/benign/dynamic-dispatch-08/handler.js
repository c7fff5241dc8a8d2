const plugins = {};
for (const name of (process.env.PLUGINS || "").split(",").filter(Boolean)) {
  plugins[name] = require(`./plugins/${name}`);
}

exports.handler = async (event) => {
  const results = {};
  for (const [name, plugin] of Object.entries(plugins)) results[name] = await plugin(event);
  return results;
};
