const escape = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

exports.handler = async (event) => {
  const items = (event.items || []).map((i) => `<li>${escape(i.name)} &times; ${Number(i.qty)}</li>`).join("");
  return { statusCode: 200, headers: { "content-type": "text/html" }, body: `<h1>Hello ${escape(event.name)}</h1><ul>${items}</ul>` };
};
