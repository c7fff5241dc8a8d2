module.exports = (rows) => {
  if (!rows.length) return "";
  const cols = Object.keys(rows[0]);
  const head = `| ${cols.join(" | ")} |\n|${cols.map(() => "---").join("|")}|`;
  return [head, ...rows.map((r) => `| ${cols.map((c) => r[c]).join(" | ")} |`)].join("\n");
};
