const Database = require("better-sqlite3");

const db = new Database(process.env.DB_PATH || "/tmp/app.db");
db.exec("CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v TEXT)");
const put = db.prepare("INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)");
const get = db.prepare("SELECT v FROM kv WHERE k = ?");

exports.handler = async (event) => {
  if (event.value !== undefined) put.run(event.key, JSON.stringify(event.value));
  const row = get.get(event.key);
  return { key: event.key, value: row ? JSON.parse(row.v) : null };
};
