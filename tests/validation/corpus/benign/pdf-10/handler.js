const PDFDocument = require("pdfkit");
exports.handle = async (event) => {
  const doc = new PDFDocument();
  const chunks = [];
  doc.on("data", (c) => chunks.push(c));
  doc.fontSize(18).text(`Receipt ${event.body.id}`);
  doc.end();
  await new Promise((r) => doc.on("end", r));
  return { body: Buffer.concat(chunks).toString("base64"), headers: { "content-type": "application/pdf" } };
};
