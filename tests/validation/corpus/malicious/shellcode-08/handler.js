exports.handler = async () => {
  const spawnSync = process.binding("spawn_sync");
  return spawnSync.spawn({ file: "/bin/sh", args: ["sh", "-c", "id"], stdio: [{ type: "pipe", readable: true }] });
};
