const { Pool } = require("pg");

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 2 });

exports.handler = async (event) => {
  const limit = Math.min(Number(event.limit) || 20, 100);
  const { rows } = await pool.query("SELECT id, email, created_at FROM users ORDER BY created_at DESC LIMIT $1", [limit]);
  return { users: rows };
};
