const { Pool } = require("pg");
const { stringify } = require("csv-stringify/sync");

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 2 });

exports.handler = async (event) => {
  const { from, to } = event.queryStringParameters || {};
  if (!from || !to || Number.isNaN(Date.parse(from)) || Number.isNaN(Date.parse(to))) {
    return { statusCode: 400, body: "from and to must be ISO dates" };
  }
  const { rows } = await pool.query(
    `SELECT i.number, c.name AS customer, i.issued_on, i.due_on, i.amount_cents, i.status
       FROM invoices i JOIN customers c ON c.id = i.customer_id
      WHERE i.issued_on BETWEEN $1 AND $2
      ORDER BY i.issued_on, i.number`,
    [from, to],
  );
  const csv = stringify(
    rows.map((r) => ({ ...r, amount: (r.amount_cents / 100).toFixed(2), issued_on: r.issued_on.toISOString().slice(0, 10) })),
    { header: true, columns: ["number", "customer", "issued_on", "due_on", "amount", "status"] },
  );
  return {
    statusCode: 200,
    headers: {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="invoices_${from}_${to}.csv"`,
    },
    body: csv,
  };
};
