const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
module.exports = (rows) =>
  "<table>" + rows.map((r) => "<tr>" + Object.values(r).map((v) => `<td>${esc(v)}</td>`).join("") + "</tr>").join("") + "</table>";
