const { parse } = require("csv-parse/sync");

exports.handler = async (event) => {
  const rows = parse(event.csv, { columns: true, skip_empty_lines: true });
  const col = event.column || "value";
  const values = rows.map((r) => Number(r[col])).filter((v) => !Number.isNaN(v));
  const mean = values.reduce((a, b) => a + b, 0) / (values.length || 1);
  return { count: values.length, mean };
};
