// A SQL playground: runs the caller's query against an in-memory SQLite (sql.js, compiled
// to WebAssembly) seeded with sample data. Nothing outside the in-memory database is reachable.
const initSqlJs = require("sql.js");

const SEED = `
  CREATE TABLE employees (id INTEGER PRIMARY KEY, name TEXT, dept TEXT, salary INTEGER);
  INSERT INTO employees (name, dept, salary) VALUES
    ('Ada', 'eng', 120), ('Grace', 'eng', 130), ('Edsger', 'research', 110);
`;

let SQL;

exports.handler = async (event) => {
  SQL = SQL || (await initSqlJs());
  const { query } = JSON.parse(event.body || "{}");
  if (typeof query !== "string" || query.length > 2000) {
    return { statusCode: 400, body: JSON.stringify({ error: "query: a string of at most 2000 characters" }) };
  }
  const db = new SQL.Database();
  try {
    db.exec(SEED);
    const results = db.exec(query);
    return { statusCode: 200, body: JSON.stringify(results.map((r) => ({ columns: r.columns, rows: r.values.slice(0, 100) }))) };
  } catch (err) {
    return { statusCode: 400, body: JSON.stringify({ error: String(err.message || err) }) };
  } finally {
    db.close();
  }
};
